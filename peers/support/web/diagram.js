// The live sequence diagram (issue 35, item 1): the SVG the server draws with --diagram's own
// code, put into the page through a parser that keeps only the elements that code writes, each
// arrow that is a frame made a button that shows its frame. Loaded after live.js ($, tab).
"use strict";

// The elements the diagram's code (picture.py) writes: anything else in what arrives is dropped,
// as is every attribute that could run or fetch something, before it reaches the page.
const DRAWN = new Set(["svg", "defs", "marker", "path", "rect", "line", "circle", "text", "tspan", "g", "title"]);

// The run's sequence diagram, drawn again by the server as --diagram draws it: the SVG, made
// clickable where a step is a frame (event.frames[N - 1]: the frame drawn by data-step=N).
function draw(event) {
  const parsed = new DOMParser().parseFromString(event.svg, "image/svg+xml");
  const svg = parsed.documentElement;
  if (svg.localName !== "svg" || parsed.querySelector("parsererror")) return;
  for (const node of [svg, ...svg.querySelectorAll("*")]) {
    if (!DRAWN.has(node.localName)) { node.remove(); continue; }
    for (const {name} of [...node.attributes]) if (/^on|href|style/i.test(name)) node.removeAttribute(name);
  }
  svg.setAttribute("role", "group");
  svg.removeAttribute("id");
  for (const group of svg.querySelectorAll("g.step")) {
    const seq = event.frames[Number(group.dataset.step) - 1];
    if (seq === null || seq === undefined) continue;
    group.dataset.seq = seq;
    group.setAttribute("tabindex", "0");
    group.setAttribute("role", "button");
    group.setAttribute("aria-label", `frame #${seq}: ${group.textContent}`);
  }
  const panel = $("diagram-panel");
  const atEnd = panel.scrollTop + panel.clientHeight >= panel.scrollHeight - 8;
  $("live-diagram").replaceChildren(document.importNode(svg, true));
  if (atEnd) panel.scrollTop = panel.scrollHeight;
}

// An arrow clicked: its frame chosen in the frames list (shown, on a narrow window, in its tab).
function showFrame(group) {
  for (const old of document.querySelectorAll(".chosen")) old.classList.remove("chosen");
  const item = document.querySelector(`#frames li.http[data-seq="${CSS.escape(group.dataset.seq)}"]`);
  if (!item) return;
  group.classList.add("chosen");
  item.classList.add("chosen");
  for (const near of [item.previousElementSibling, item.nextElementSibling]) {
    if (near && near.classList.contains("kind-frame")) near.classList.add("chosen"); // its bytes, as printed
  }
  if (getComputedStyle($("tab-diagram")).display !== "none") tab("frames"); // a narrow window: the diagram's tab
  item.scrollIntoView({block: "start"});
}

{
  $("live-diagram").addEventListener("click", (clicked) => {
    const group = clicked.target.closest("g.step[data-seq]");
    if (group) showFrame(group);
  });
  $("live-diagram").addEventListener("keydown", (pressed) => {
    const group = pressed.target.closest("g.step[data-seq]");
    if (group && (pressed.key === "Enter" || pressed.key === " ")) { pressed.preventDefault(); showFrame(group); }
  });
}
