// The live page's script: starts runs, shows each frame as the server streams it, holds and
// sends frames in step mode, and edits the allowlist. Everything a peer controls (card text,
// artifacts, error messages, headers) reaches the DOM only as textContent, never as markup.
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
// This page's conversation with an agent: its card and OAuth token are had once (conversation.py).
let conversation = crypto.randomUUID();
let refetch = false; // Fetch the card again: said with the next turn
const ENDED = ["completed", "failed", "canceled", "rejected"];

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

// The credential entered, for the server to hold for the agent's origin alone; none if the field is empty.
function credential() {
  const secret = $("token").value.trim();
  return {scheme: secret ? $("scheme").value : "", secret};
}

// One operation on the agent the URL field names (POST /agent): each is a run of its own.
function talk(operation) {
  const again = refetch;
  refetch = false;
  return follow("/agent", {
    conversation, again,
    operation, peer: $("peer").value.trim(), follow: $("follow").value, wire: $("wire").value,
    step: $("step").checked, allowlist: $("allowlist").value, text: $("message").value,
    part: $("part-data").checked ? "data" : "text", skill: $("skill").value,
    task: $("task").value, context: $("context").value, ...credential(), verbose: $("verbose").checked,
  });
}

// A task an agent told of: listed with its state; a paused one is what the next message continues.
// A turn of the conversation, kept on screen: what was asked, then its task and what it came to.
function turn(asked) {
  const item = element("li", undefined, "turn");
  const said = asked.operation === "send" ? `you: ${asked.text}` : `you: ${asked.operation}${asked.task ? ` ${asked.task}` : ""}`;
  item.append(element("p", said, "asked"));
  $("turns").append(item);
  return item;
}

// The agent's card: one line, the verdict of its reading, and the whole card a click away.
function card(event) {
  $("card").hidden = false;
  $("card-line").textContent = event.line;
  $("card-verdict").textContent = event.verdict;
  $("card-verdict").className = event.problems.length ? "bad" : "good";
  $("card-how").textContent = `(${event.how})`;
  $("card-problems").replaceChildren(...event.problems.map((problem) => element("li", problem)));
  $("card-full").textContent = event.card;
}

function task(event) {
  if (current && current.turn) {
    current.turn.append(element("p", `task ${event.task} · context ${event.context || "-"} · ${event.state}`, `state-${event.state}`));
  }
  const item = element("li", `${event.task} (context ${event.context || "-"}): ${event.state}`, `state-${event.state}`);
  const pick = element("button", "use");
  pick.type = "button";
  pick.addEventListener("click", () => { $("task").value = event.task; $("context").value = event.context; });
  item.append(" ", pick);
  $("tasks").append(item);
  if (["input-required", "auth-required"].includes(event.state)) {
    $("task").value = event.task;
    $("context").value = event.context;
  } else if (ENDED.includes(event.state) && $("task").value === event.task) {
    $("task").value = ""; // it takes no more messages: the next one starts a new task
    $("context").value = "";
  }
}

async function openSaved() {
  const file = $("open").files[0];
  if (file) await follow("/traces", {text: await file.text()});
}

async function follow(path, asked) {
  const {status, answer} = await ask("POST", path, asked);
  $("message-problem").textContent = "";
  if (status !== 201) { // nothing started: the last run's frames stay, and the status says why
    setState("refused", answer.error || `HTTP ${status}`);
    if (path === "/agent") $("message-problem").textContent = answer.error || `HTTP ${status}`; // beside the field
    return null;
  }
  if (current) current.events.close();
  $("frames").replaceChildren();
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
      if (current.turn) current.turn.append(element("p", event.text, `kind-${event.kind}`));
    }
  } else if (event.type === "frame") {
    const pushed = event.pushed_by ? `, pushed by ${event.pushed_by}` : "";
    const head = event.direction === "-->" ? `${event.method} ${event.url}` : `HTTP ${event.status}${
      event.elapsed_ms === null ? "" : `, ${event.elapsed_ms} ms`}${pushed}`;
    const headers = Object.entries(event.headers).map(([name, value]) => `${name}: ${value}`).join("; ");
    const item = element("li", `[${event.direction} #${event.seq} ${head}] ${headers}`,
      `http ${event.direction === "-->" ? "send" : "receive"}${event.status >= 400 ? " failed" : ""}`);
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
  frames.lastElementChild && frames.lastElementChild.scrollIntoView({block: "nearest"});
}

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

function tab(which) {
  document.body.dataset.tab = which;
  for (const button of document.querySelectorAll("[role=tab]")) {
    button.setAttribute("aria-selected", String(button.id === `tab-${which}`));
  }
}

async function allowlist(save) {
  const {answer} = await ask("POST", "/allowlist", {text: $("allowlist").value, save});
  const said = $("allowlist-problem");
  said.className = answer.problem || answer.error ? "bad" : "";
  said.textContent = answer.problem || answer.error || (save ? "saved to the file" :
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
  $("tab-frames").addEventListener("click", () => tab("frames"));
  $("tab-diagram").addEventListener("click", () => tab("diagram"));
  $("live-diagram").addEventListener("click", (clicked) => {
    const group = clicked.target.closest("g.step[data-seq]");
    if (group) showFrame(group);
  });
  $("live-diagram").addEventListener("keydown", (pressed) => {
    const group = pressed.target.closest("g.step[data-seq]");
    if (group && (pressed.key === "Enter" || pressed.key === " ")) { pressed.preventDefault(); showFrame(group); }
  });
  $("send").addEventListener("click", () => ask("POST", `/runs/${current.id}/send`));
  $("stop").addEventListener("click", () => ask("POST", `/runs/${current.id}/stop`));
  $("check").addEventListener("click", () => allowlist(false));
  $("open").addEventListener("change", openSaved);
  $("save").addEventListener("click", () => allowlist(true));
  $("say").addEventListener("click", () => talk("send"));
  $("list").addEventListener("click", () => { $("tasks").replaceChildren(); talk("list"); });
  $("get").addEventListener("click", () => talk("get"));
  $("cancel").addEventListener("click", () => talk("cancel"));
  // Enter in the message sends it, and only it: a turn of the conversation, not the whole story.
  $("message").addEventListener("keydown", (pressed) => {
    if (pressed.key !== "Enter" || pressed.shiftKey || pressed.isComposing) return;
    pressed.preventDefault();
    talk("send");
  });
  $("refetch").addEventListener("click", () => { refetch = true; $("card-how").textContent = "(fetched again with the next turn)"; });
  $("new-conversation").addEventListener("click", () => {
    conversation = crypto.randomUUID();
    $("turns").replaceChildren();
    $("card").hidden = true;
    $("task").value = "";
    $("context").value = "";
  });
  // #run=NAME sets that run up when the page loads (#run=approval&step=1&transport=http ...); Run starts it.
  const asked = new URLSearchParams(location.hash.slice(1));
  if (asked.has("transport")) $("transport").value = asked.get("transport");
  if (asked.has("wire")) $("wire").value = asked.get("wire");
  if (asked.has("peer")) $("peer").value = asked.get("peer");
  if (asked.has("follow")) $("follow").value = asked.get("follow");
  $("step").checked = asked.get("step") === "1";
  // A link sets the run up, and a person starts it: any page (one on another port of this
  // machine too) can send the browser here with a fragment naming a run and an agent's URL.
  const linked = asked.has("run") && lessons.some((entry) => entry.name === asked.get("run"));
  if (linked) $("run").value = asked.get("run");
  showAbout();
  setState("idle", linked ? `set up from the link (${asked.get("run")}${asked.has("peer") ? `, with the agent ` +
    `at ${$("peer").value}` : ""}): Run starts it` : "");
  if (linked) $("start").focus();
}

load();
