// The page's tools beside its runs (issue 35): check an agent, read a run's frames (filter,
// search, each body pretty-printed with its raw bytes a click away), compare two saved runs,
// add a refused agent to the allowlist (its diff shown, written only when confirmed), and
// copy a request as curl. Loaded after live.js, whose $, element, ask, tab and current it uses.
// Every string from an agent, a trace or a report reaches the DOM as textContent, never markup.
"use strict";

const ORDER = {fail: 0, pass: 1, skip: 2, "not measured": 3};
let read = []; // the frames of the run being read, as its trace keeps them
let proposed = null; // the allowlist text an "Add to allowlist" would write, once confirmed

function button(text, onClick) {
  const made = element("button", text);
  made.type = "button";
  made.addEventListener("click", onClick);
  return made;
}

// A frame of a check report: its line, headers and body, as text.
function reportFrame(frame) {
  const status = frame.status === null ? "" : ` HTTP ${frame.status}`;
  const headers = Object.entries(frame.headers || {}).map(([name, value]) => `${name}: ${value}`).join("\n");
  return element("pre", `${frame.direction} ${frame.method} ${frame.url}${status}\n${headers}\n\n${frame.body}`);
}

async function checkAgent() {
  const peer = $("peer").value.trim();
  const before = [$("check-summary").className, $("check-summary").textContent];
  $("check-summary").className = "";
  $("check-summary").textContent = `checking ${peer}${$("deep").checked ? " (deep: messages are sent)" : ""}...`;
  const {status, answer} = await ask("POST", "/check", {peer, ...credential(), deep: $("deep").checked});
  if (said(answer, status)) { // a URL or credential that cannot be: said beside it, the last report kept
    [$("check-summary").className, $("check-summary").textContent] = before;
    return;
  }
  tab("tools");
  $("check-report").replaceChildren();
  $("check-command").textContent = "";
  if (status !== 200) {
    $("check-summary").className = "bad";
    $("check-summary").textContent = answer.error || `HTTP ${status}`;
    return;
  }
  const report = answer.report;
  $("check-summary").className = report.exit_status ? "bad" : "good";
  $("check-summary").textContent = `${report.card.name} (${report.card.version}, ${
    report.card.bindings.join(", ") || "no binding"}): ${answer.summary}`;
  $("check-command").textContent = answer.command;
  const rows = [...report.requirements].sort((one, two) => (ORDER[one.outcome] ?? 9) - (ORDER[two.outcome] ?? 9));
  $("check-report").replaceChildren(...rows.map((row) => {
    const item = element("li", undefined, `outcome-${row.outcome.replace(" ", "-")}`);
    const details = element("details");
    details.append(element("summary", `${row.outcome.toUpperCase()} ${row.level} ${row.id}: ${row.title}`),
      element("p", `fix: ${row.fix}`), element("p", `spec: ${row.section}`, "hint"));
    for (const verdict of row.verdicts) {
      details.append(element("p", `${verdict.binding ? `${verdict.binding}: ` : ""}${verdict.outcome}: ${verdict.detail}`));
      details.append(...verdict.frames.map(reportFrame));
    }
    item.append(details);
    return item;
  }));
}

// The run's frames from its trace (the same JSONL as --trace), for reading: called when a run ends.
async function readRun(run) {
  const response = await fetch(ofRun(run, "trace.jsonl"), {credentials: "omit"});
  const records = (await response.text()).split("\n").filter((line) => line).map((line) => JSON.parse(line));
  read = records.filter((record) => record.kind === "frame");
  for (const [id, field] of [["filter-peer", "peer"], ["filter-method", "method"]]) {
    const kept = $(id).value;
    const values = [...new Set(read.map((frame) => String(frame[field])))].sort();
    $(id).replaceChildren(element("option", "any"), ...values.map((value) => element("option", value)));
    $(id).firstChild.value = "";
    $(id).value = values.includes(kept) ? kept : "";
  }
  $("reader-frames").replaceChildren(...read.map(readable));
  filter();
}

const failed = (frame) => frame.http_status >= 400 || /"error"\s*:/.test(frame.body || "");

function pretty(text) {
  try { return JSON.stringify(JSON.parse(text), null, 2); } catch (ignored) { return text; }
}

// One frame to read: a line, then its body pretty-printed (folded), its raw bytes a click away.
function readable(frame, index) {
  const item = element("li", undefined, `${frame.direction === "-->" ? "send" : "receive"}${failed(frame) ? " failed" : ""}`);
  item.dataset.index = index;
  const status = frame.direction === "<--" ? ` HTTP ${frame.http_status}` : "";
  const details = element("details");
  details.append(element("summary", `#${index} ${frame.direction} ${frame.method || frame.http_method} ${frame.peer}${status}`));
  const headers = Object.entries(frame.headers || {}).map(([name, value]) => `${name}: ${value}`).join("\n");
  const body = element("pre", pretty(frame.body || ""), "body");
  const raw = element("pre", frame.body || "", "raw");
  raw.hidden = true;
  const toggle = button("raw bytes", () => {
    raw.hidden = !raw.hidden;
    body.hidden = !raw.hidden;
    toggle.textContent = raw.hidden ? "raw bytes" : "pretty-printed";
  });
  details.append(element("pre", `${frame.http_method} ${frame.url}\n${headers}`, "headers"), toggle, body, raw);
  if (frame.direction === "-->") details.append(button("Copy as curl", () => copyCurl(index, details)));
  item.append(details);
  return item;
}

function filter() {
  const peer = $("filter-peer").value, method = $("filter-method").value, status = $("filter-status").value;
  const direction = $("filter-direction").value, words = $("filter-search").value.toLowerCase();
  let shown = 0;
  for (const item of $("reader-frames").children) {
    const frame = read[Number(item.dataset.index)];
    const keep = (!peer || String(frame.peer) === peer) && (!method || String(frame.method) === method) &&
      (!status || (status === "error") === failed(frame)) && (!direction || frame.direction === direction) &&
      (!words || JSON.stringify(frame).toLowerCase().includes(words));
    item.hidden = !keep;
    shown += keep ? 1 : 0;
  }
  $("reader-count").textContent = `${shown} of ${read.length} frames shown`;
}

async function copyCurl(index, into) {
  const {status, answer} = await ask("GET", `/runs/${encodeURIComponent(current.id)}/curl?frame=${index}`);
  const shown = into.querySelector("pre.curl") || into.appendChild(element("pre", "", "curl"));
  shown.textContent = status === 200 ? answer.curl : answer.error || `HTTP ${status}`;
  if (status === 200 && navigator.clipboard) navigator.clipboard.writeText(answer.curl).catch(() => {});
}

// A request in the live frames list, as curl: its place among the run's frames is its number in the trace.
function offerCurl(item) {
  item.append(button("Copy as curl", () => {
    copyCurl([...$("frames").querySelectorAll("li.http")].indexOf(item), item);
  }));
}

// Two saved runs compared (POST /traces/diff): each frame once, added, removed, changed or the same.
async function compare(first, second) {
  tab("tools");
  const {status, answer} = await ask("POST", "/traces/diff", {a: first, b: second});
  $("diff-summary").className = status === 200 ? "" : "bad";
  if (status !== 200) {
    $("diff-summary").textContent = answer.error || `HTTP ${status}`;
    $("diff-rows").replaceChildren();
    return;
  }
  const count = (change) => answer.rows.filter((row) => row.change === change).length;
  $("diff-summary").textContent = `${count("same")} the same, ${count("changed")} changed, ` +
    `${count("added")} added (only in the second), ${count("removed")} removed (only in the first)`;
  $("diff-rows").replaceChildren(...answer.rows.map((row) => {
    const item = element("li", undefined, `change-${row.change}`);
    const at = `${row.a === null ? "-" : `#${row.a}`} / ${row.b === null ? "-" : `#${row.b}`}`;
    item.append(element("p", `${row.change}: ${row.label} (${at})`));
    if (row.fields.length) {
      const fields = element("ul");
      fields.append(...row.fields.map((field) => element("li", `${field.field}: ${field.a ?? "(none)"} -> ${field.b ?? "(none)"}`)));
      if (row.more) fields.append(element("li", `and ${row.more} more`));
      item.append(fields);
    }
    return item;
  }));
}

async function compareFiles() {
  const [first, second] = [$("diff-a").files[0], $("diff-b").files[0]];
  if (!first || !second) {
    $("diff-summary").className = "bad";
    $("diff-summary").textContent = "pick two saved runs (--trace files) first";
    return;
  }
  await compare(await first.text(), await second.text());
}

// A refusal in "Trust decisions": its button shows the entry and the file's diff; nothing is written yet.
function offerEntry(item, event) {
  if (event.verdict !== "refused" || !event.endpoint || event.endpoint === "None") return;
  item.append(button("Add to allowlist", async () => {
    const {status, answer} = await ask("POST", "/allowlist/entry",
      {text: $("allowlist").value, name: event.peer, endpoint: event.endpoint});
    $("proposal").hidden = false;
    $("proposal-confirm").disabled = status !== 200;
    proposed = status === 200 ? answer.text : null;
    $("proposal-entry").textContent = status === 200 ? answer.entry : "";
    $("proposal-which").className = status === 200 ? "" : "bad";
    $("proposal-which").textContent = status === 200 ? answer.which : answer.error || `HTTP ${status}`;
    $("proposal-diff").replaceChildren(...(status === 200 ? answer.diff.split("\n") : []).map((line) =>
      element("span", `${line}\n`, /^(\+\+\+|---) /.test(line) ? "" : line.startsWith("+") ? "added" : line.startsWith("-") ? "removed" : "")));
    $("proposal").scrollIntoView({block: "nearest"});
  }));
}

async function confirmEntry() {
  if (proposed === null) return;
  const {status, answer} = await ask("POST", "/allowlist", {text: proposed, save: true});
  if (status === 200) $("allowlist").value = proposed;
  $("proposal-which").className = status === 200 ? "good" : "bad";
  $("proposal-which").textContent = status === 200 ? `written to ${$("allowlist-path").textContent}; ` +
    "the next run uses it" : answer.problem || answer.error || `HTTP ${status}`;
  $("proposal-confirm").disabled = true;
  proposed = null;
}

// A deferred script runs once the document is parsed: its controls are there to listen to.
{
  $("check-agent").addEventListener("click", checkAgent);
  $("diff").addEventListener("click", compareFiles);
  $("proposal-confirm").addEventListener("click", confirmEntry);
  $("proposal-cancel").addEventListener("click", () => { $("proposal").hidden = true; proposed = null; });
  for (const id of ["filter-peer", "filter-method", "filter-status", "filter-direction"]) $(id).addEventListener("change", filter);
  $("filter-search").addEventListener("input", filter);
}
