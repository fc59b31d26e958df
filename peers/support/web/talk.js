// The page's conversation with one agent (issue 35, item 2): each button is one operation, a run
// of its own (POST /agent); each turn is kept on screen with its task and context; the card is one
// line with its verdict, the whole card a click away, fetched once a conversation
// (conversation.py) unless asked again. Loaded after live.js, whose $, element, follow and current
// it uses. What the agent says (its card, tasks, errors) reaches the DOM only as textContent.
"use strict";

// This page's conversation with an agent: its card and OAuth token are had once (conversation.py).
let conversation = crypto.randomUUID();
let refetch = false; // Fetch the card again: said with the next turn
const ENDED = ["completed", "failed", "canceled", "rejected"];

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

// What a turn came to, added to it, and the turn scrolled into view: the newest turn is the one read.
function kept(item, said) {
  item.append(said);
  item.scrollIntoView({block: "nearest"});
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
    kept(current.turn, element("p", `task ${event.task} · context ${event.context || "-"} · ${event.state}`, `state-${event.state}`));
  }
  const item = element("li", `${event.task} (context ${event.context || "-"}): ${event.state}`, `state-${event.state}`);
  const pick = element("button", "use");
  pick.type = "button";
  pick.setAttribute("aria-label", `use task ${event.task} for the next message`);
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

// A deferred script runs once the document is parsed: its controls are there to listen to.
{
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
}
