// The page's Proxy panel (issue 35, item 3): a `proxy --to URL` session started by the page and
// watched as a run is (live.js's follow: its frames, lines and diagram as they stream), its own
// URL shown to point a client at, and Stop. Its flags as `proxy`'s: --fault, --seed, --step (the
// frames held until Send, beside Run), --webhook, and --verbose from the page's Options. Loaded after live.js, whose $, ask, follow and current it uses.
// What the session shows came from the two programs it stands between: live.js puts it in as text.
"use strict";

let proxying = null; // the session's run, while it goes

async function startProxy() {
  $("proxy-problem").textContent = "";
  const seed = $("proxy-seed").value.trim();
  const answer = await follow("/proxy", {to: $("proxy-to").value.trim(), faults: $("proxy-faults").value,
    seed: seed === "" ? 0 : /^[0-9]{1,10}$/.test(seed) ? Number(seed) : seed, // else said beside it
    step: $("proxy-step").checked,
    webhook: $("proxy-webhook").checked, verbose: $("verbose").checked});
  if (!answer) { // nothing started: said beside its field (controls.js), or here; the last run's frames kept
    if (!document.querySelector("#proxy [aria-invalid]")) $("proxy-problem").textContent = $("status").textContent;
    return;
  }
  proxying = answer;
  $("proxy-url").textContent = answer.proxy;
  $("proxy-where").hidden = false;
  $("proxy-stop").disabled = false;
  $("proxy-start").disabled = true;
  // Its end (Stop, here or beside Run) frees the panel; a run started meanwhile leaves the session going.
  current.events.addEventListener("message", (message) => {
    if (JSON.parse(message.data).type !== "end") return;
    $("proxy-where").hidden = true;
    $("proxy-stop").disabled = true;
    $("proxy-start").disabled = false;
  });
}

function stopProxy() {
  if (proxying) ask("POST", `/runs/${encodeURIComponent(proxying.id)}/stop`);
  proxying = null;
}

$("proxy-start").addEventListener("click", startProxy);
$("proxy-stop").addEventListener("click", stopProxy);
// The agent to front is, unless said, the one in the URL field beside the run controls.
$("proxy-to").addEventListener("focus", () => { if (!$("proxy-to").value) $("proxy-to").value = $("peer").value.trim(); });
