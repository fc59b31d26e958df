// The live page's script: starts runs, shows each frame as the server streams it, holds and
// sends frames in step mode, and edits the allowlist. Everything a peer controls (card text,
// artifacts, error messages, headers) reaches the DOM only as textContent, never as markup.
// Beside it: controls.js (tabs, each input problem beside its field), talk.js (a conversation
// with an agent), diagram.js (the live sequence diagram), tools.js and proxy.js; each uses
// what this one declares, and load() runs once all of them have (DOMContentLoaded).
"use strict";

const $ = (id) => document.getElementById(id);
// The token the web command printed, from this load's address or, after a reload, this tab's
// sessionStorage (kept per port, unlike a cookie, which 127.0.0.1's other ports would be sent).
const TOKEN = new URLSearchParams(location.search).get("token") || sessionStorage.getItem("a2a-web-token") || "";
sessionStorage.setItem("a2a-web-token", TOKEN);
let current = null; // {id, key, events: EventSource}
// What the browser asks for itself (no header of ours goes with it) carries the run's own key, not the token.
const ofRun = (run, what) => `/runs/${encodeURIComponent(run.id)}/${what}?key=${encodeURIComponent(run.key)}`;
let lessons = [];
const MOST_SHOWN = 3000; // lines kept in the frames list; older ones are taken off it, and the page says so
let takenOff = 0, scrolling = false;

function element(tag, text, className) {
  const made = document.createElement(tag);
  if (text !== undefined) made.textContent = text;
  if (className) made.className = className;
  return made;
}

async function ask(method, path, body) {
  const response = await fetch(path, {
    method, credentials: "omit",
    headers: {"X-Workbench-Token": TOKEN, ...(body === undefined ? {} : {"Content-Type": "application/json"})},
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  let answer = {};
  try { answer = await response.json(); } catch (ignored) { answer = {error: `HTTP ${response.status}`}; }
  return {status: response.status, answer};
}

function setState(state, said) {
  document.body.dataset.state = state;
  $("status").textContent = said;
  const going = state === "running" || state === "held";
  $("stop").disabled = !going;
  $("send").disabled = state !== "held";
}

function showAbout() {
  const chosen = lessons.find((entry) => entry.name === $("run").value);
  $("about").textContent = chosen ? chosen.about : "";
}

function start() {
  return follow("/runs", {
    run: $("run").value, transport: $("transport").value, wire: $("wire").value,
    step: $("step").checked, allowlist: $("allowlist").value, peer: $("peer").value.trim(),
    ...credential(), follow: $("follow").value, verbose: $("verbose").checked,
  });
}

async function openSaved() {
  const file = $("open").files[0];
  if (file) await follow("/traces", {text: await file.text()});
}

async function follow(path, asked) {
  const {status, answer} = await ask("POST", path, asked);
  if (status !== 201) { // nothing started: the last run's frames stay; the status and the field say why
    setState("refused", answer.error || `HTTP ${status}`);
    said(answer, status);
    return null;
  }
  said(null);
  if (current) current.events.close();
  $("frames").replaceChildren();
  for (const id of ["dropped-events", "dropped-records", "dropped-page"]) $(id).textContent = "";
  $("dropped").hidden = true;
  takenOff = 0;
  $("live-diagram").replaceChildren();
  $("decisions").replaceChildren();
  $("trace").hidden = true;
  $("steps").hidden = true;
  $("command").textContent = answer.command;
  setState("running", "running");
  const events = new EventSource(ofRun(answer, "events"));
  current = {id: answer.id, key: answer.key, events, turn: path === "/agent" ? turn(asked) : null};
  document.body.dataset.run = answer.id;
  events.onmessage = (message) => show(JSON.parse(message.data));
  events.onerror = () => { // a refused stream (503: too many open) is closed for good; a broken one reconnects
    if (events.readyState === EventSource.CLOSED && current && current.events === events) {
      setState("refused", "the server refused this run's event stream (too many open: close a page or two; or the run is gone)");
    }
  };
  return answer;
}

function show(event) {
  const frames = $("frames");
  if (event.type === "line") {
    // A proxy's annotation ("    ! ID LEVEL ...") and fault lines are marked, as the terminal sets them apart.
    const marked = /^ {4}! /.test(event.text) ? " annotation" : event.text.startsWith("[fault] ") ? " fault" : "";
    const item = element("li", undefined, `kind-${event.kind}${marked}`);
    item.append(element("pre", event.text));
    frames.append(item);
    if (!["story", "banner", "frame"].includes(event.kind)) {
      $("decisions").append(element("li", event.text, `kind-${event.kind}`));
      if (current.turn) kept(current.turn, element("p", event.text, `kind-${event.kind}`)); // talk.js
    }
  } else if (event.type === "frame") {
    const pushed = event.pushed_by ? `, pushed by ${event.pushed_by}` : "";
    // A stream's status and headers come as it starts, before its events; its whole frame once it ended.
    const stream = event.stream === "starts" ? ", a stream: its events follow" : "";
    const head = event.direction === "-->" ? `${event.method} ${event.url}` : `HTTP ${event.status}${
      event.elapsed_ms === null ? "" : `, ${event.elapsed_ms} ms`}${pushed}${stream}`;
    const headers = Object.entries(event.headers).map(([name, value]) => `${name}: ${value}`).join("; ");
    const item = element("li", `[${event.direction} #${event.seq} ${head}] ${headers}`,
      `http ${event.direction === "-->" ? "send" : "receive"}${event.status >= 400 ? " failed" : ""}${
        event.stream ? " stream-head" : ""}`);
    item.dataset.seq = event.seq;
    if (event.direction === "-->") offerCurl(item); // tools.js: this request, as curl
    frames.append(item);
  } else if (event.type === "trust") {
    const item = element("li", undefined, `verdict-${event.verdict}`);
    item.append(element("strong", `${event.peer}: ${event.verdict}`), element("span", ` (${event.reason})`));
    $("decisions").append(item);
    offerEntry(item, event); // tools.js: a refusal's "Add to allowlist"
  } else if (event.type === "task") {
    task(event);
  } else if (event.type === "held") {
    frames.append(element("li", `frame #${event.seq} is held: Send lets it leave, Stop ends the run`, "held"));
    setState("held", `frame #${event.seq} held`);
  } else if (event.type === "sent") {
    setState("running", "running");
  } else if (event.type === "card") {
    card(event);
  } else if (event.type === "diagram") {
    draw(event);
  } else if (event.type === "dropped") { // a long proxy session: the server kept its newest part alone
    $(`dropped-${event.what === "records" ? "records" : "events"}`).textContent = event.text;
    $("dropped").hidden = false;
  } else if (event.type === "end") {
    current.events.close();
    setState("ended", `ended, exit status ${event.status}`);
    const trace = $("trace");
    trace.href = ofRun(current, "trace.jsonl");
    trace.hidden = false;
    $("steps").href = ofRun(current, "steps.html");
    $("steps").hidden = false;
    readRun(current); // tools.js: its frames, to filter, search and read
  }
  while (frames.childElementCount > MOST_SHOWN) { // the page's own memory stays bounded too
    frames.firstElementChild.remove();
    takenOff += 1;
    $("dropped-page").textContent = `This list shows the newest ${MOST_SHOWN} lines: ${takenOff} older ones were taken off it.`;
    $("dropped").hidden = false;
  }
  if (!scrolling) { // once a frame of the screen, however many events arrived: a burst lays out once
    scrolling = true;
    requestAnimationFrame(() => {
      scrolling = false;
      if (frames.lastElementChild) frames.lastElementChild.scrollIntoView({block: "nearest"});
    });
  }
}

async function allowlist(save) {
  const {answer} = await ask("POST", "/allowlist", {text: $("allowlist").value, save});
  const problem = answer.problem || answer.error;
  $("allowlist").toggleAttribute("aria-invalid", Boolean(problem));
  $("allowlist-problem").className = problem ? "bad" : "";
  $("allowlist-problem").textContent = problem || (save ? "saved to the file" :
    `the loader takes it: ${answer.entries.map((entry) => `${entry.name} at ${entry.endpoint}`).join(", ") || "no peer trusted"}`);
}

async function load() {
  // The token was in the address once; the script holds it from now on.
  history.replaceState(null, "", `/${location.hash}`);
  if (!TOKEN) {
    setState("idle", "no token: open the address the web command printed (it ends in ?token=...)");
    return;
  }
  const {answer} = await ask("GET", "/lessons");
  lessons = answer.runs;
  for (const entry of lessons) {
    const option = element("option", `${entry.name}: ${entry.about}`);
    option.value = entry.name;
    $("run").append(option);
  }
  for (const wire of answer.wires) $("wire").append(element("option", wire));
  const file = (await ask("GET", "/allowlist")).answer;
  $("allowlist").value = file.text;
  $("allowlist-path").textContent = file.path;
  $("run").addEventListener("change", showAbout);
  $("controls").addEventListener("submit", (submitted) => { submitted.preventDefault(); start(); });
  // Enter in an agent's fields would submit the form, running the whole story: it says what does what instead.
  for (const id of ["peer", "token"]) $(id).addEventListener("keydown", (pressed) => {
    if (pressed.key !== "Enter") return;
    pressed.preventDefault();
    $("status").textContent = "Enter runs nothing here: Run runs the story with this agent added; " +
      "the buttons under \"Talk to the agent at that URL\" talk to it alone";
  });
  $("rerun").addEventListener("click", start);
  $("send").addEventListener("click", () => ask("POST", `/runs/${current.id}/send`));
  $("stop").addEventListener("click", () => ask("POST", `/runs/${current.id}/stop`));
  $("check").addEventListener("click", () => allowlist(false));
  $("open").addEventListener("change", openSaved);
  $("save").addEventListener("click", () => allowlist(true));
  // #run=NAME sets that run up when the page loads (#run=approval&step=1&transport=http ...); Run starts it.
  const asked = new URLSearchParams(location.hash.slice(1));
  if (asked.has("transport")) $("transport").value = asked.get("transport");
  if (asked.has("wire")) $("wire").value = asked.get("wire");
  if (asked.has("peer")) $("peer").value = asked.get("peer");
  if (asked.has("follow")) $("follow").value = asked.get("follow");
  $("step").checked = asked.get("step") === "1";
  if (asked.get("step") === "1") options(true); // what the link set is in view
  // A link sets the run up, and a person starts it: any page (one on another port of this
  // machine too) can send the browser here with a fragment naming a run and an agent's URL.
  const linked = asked.has("run") && lessons.some((entry) => entry.name === asked.get("run"));
  if (linked) $("run").value = asked.get("run");
  showAbout();
  setState("idle", linked ? `set up from the link (${asked.get("run")}${asked.has("peer") ? `, with the agent ` +
    `at ${$("peer").value}` : ""}): Run starts it` : "");
  if (linked) $("start").focus();
}

document.addEventListener("DOMContentLoaded", load);
