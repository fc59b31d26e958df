// The page's controls for the keyboard and for a mistake (issue 35, item 6). The tabs follow
// the WAI-ARIA tabs pattern: one tab in the Tab order (the selected one, or the first shown),
// Left and Right move to the previous and next shown tab and select it, Home and End to the
// first and last. An input problem the server names a field for (entered.py: {error, field})
// is said beside that field, which is marked invalid, shown (Options unfolded, its tab chosen) and
// focused; the last run's
// frames are not touched. Loaded after live.js, whose $ it uses.
"use strict";

// The request's name for a value -> the page's field holding it; its problem is said in ID-problem.
const FIELDS = {peer: "peer", secret: "token", scheme: "token", text: "message", part: "message", task: "task",
  context: "context", skill: "skill", run: "run", transport: "transport", wire: "wire", follow: "follow",
  allowlist: "allowlist", to: "proxy-to", faults: "proxy-faults", seed: "proxy-seed"};

function unsaid(field) {
  field.removeAttribute("aria-invalid");
  const shown = $(`${field.id}-problem`);
  if (shown && shown.dataset.said) { shown.textContent = ""; delete shown.dataset.said; }
}

// The problem in a refused request's answer, beside its field; null clears every one said before.
// True when it named a field the page has.
function said(answer, status) {
  for (const field of document.querySelectorAll("[aria-invalid]")) unsaid(field);
  const id = answer && FIELDS[answer.field];
  if (!id) return false;
  const field = $(id), shown = $(`${id}-problem`);
  shown.textContent = answer.error || `HTTP ${status}`;
  shown.dataset.said = "1";
  shown.classList.add("bad");
  field.setAttribute("aria-invalid", "true");
  if (field.closest("#options")) options(true);
  if (field.closest("aside") && !field.getClientRects().length) tab("side"); // a narrow window: its tab
  field.focus();
  return true;
}

// The run's options (credential, transport, wire, follow, verbose, step): shown or folded away.
function options(shown) {
  $("options").hidden = !shown;
  $("options-toggle").setAttribute("aria-expanded", String(shown));
}

const shownTabs = () => [...document.querySelectorAll("[role=tab]")].filter((one) => one.getClientRects().length);

function tab(which) {
  document.body.dataset.tab = which;
  const tabs = [...document.querySelectorAll("[role=tab]")];
  for (const one of tabs) one.setAttribute("aria-selected", String(one.id === `tab-${which}`));
  rove();
}

// The one tab in the Tab order: the selected one if it is shown (a wide window hides the
// diagram's and the side's tabs, since both are in view), else the first shown.
function rove() {
  const shown = shownTabs();
  const chosen = shown.find((one) => one.getAttribute("aria-selected") === "true") || shown[0];
  for (const one of document.querySelectorAll("[role=tab]")) one.tabIndex = one === chosen ? 0 : -1;
}

{
  for (const one of document.querySelectorAll("[role=tab]")) {
    one.addEventListener("click", () => tab(one.id.slice("tab-".length)));
  }
  $("tabs").addEventListener("keydown", (pressed) => {
    const tabs = shownTabs(), at = tabs.indexOf(document.activeElement);
    const to = {ArrowLeft: at - 1, ArrowRight: at + 1, Home: 0, End: tabs.length - 1}[pressed.key];
    if (at < 0 || to === undefined || pressed.altKey || pressed.ctrlKey || pressed.metaKey) return;
    pressed.preventDefault();
    const next = tabs[(to + tabs.length) % tabs.length];
    next.click();
    next.focus();
  });
  addEventListener("resize", rove);
  rove();
  // A field edited is no longer the one in the wrong: its problem goes.
  document.addEventListener("input", (typed) => { if (typed.target.hasAttribute("aria-invalid")) unsaid(typed.target); });
  $("options-toggle").addEventListener("click", () => options($("options").hidden));
  options(matchMedia("(min-width: 1200px)").matches); // a wide window has room for them all
}
