"""--diagram FILE: the run as a sequence diagram, drawn from the --trace records.

Lanes: the support agent, the registry, the trust gate, the model (when one chose), and
each peer endpoint in order of appearance (a proxied session's frames alone: a client, then each agent), labelled with the name on its card and its host
(a look-alike host serving billing's card is a lane of its own: steps.py). Each step of
the run (steps.py) becomes marks: an arrow per frame, labelled by what it carried
(`tasks/send (id 1)`, `task-1 completed (id 1)`, `error -32001`, `HTTP 401`, a push to our
webhook as `task-1 working (pushed)`), a task by its id, so the turns of one task read as
one task (`SendMessage (id 3): next turn of task-1`); the gate's question, and its answer
in the words the terminal printed (`[trust] 'billing-agent' has a card whose signature
does not verify ... -> delegation REFUSED`), a stop mark where it refused (no arrow beyond it);
a stop mark with the failure's error where an exchange failed or we refused to send; a
cut across a stream that broke off, and a note where it was joined again saying what was
missed; a note on the support agent's lane for each result, pause or peer's refusal, as
printed. A reply from a peer that is not trusted is marked UNTRUSTED. Each mark has a
class that says how it went: ask, send, reply, ok, warn, fail. The same marks make the
standalone `.svg` (drawn by picture.py), the Mermaid `.mmd`, and the diagram of the
step-through page (`.html`, page.py, which reads this); tools.py writes the one a file's
name asks for.

Everything a peer controls is hostile: names, bodies, lines. It is shortened, its
invisible characters written out, and XML-escaped before it is drawn.
"""
from __future__ import annotations

from peers.a2a.bindings import HTTP_JSON
from peers.support.learner.picture import Mark, picture
from peers.support.learner.steps import Run, Step, read_run, short
from peers.support.learner.trace import PUSH
from transports import sse
from transports.codec import loads_strict

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

SUPPORT, REGISTRY, GATE, MODEL = "support agent", "registry", "trust gate", "model"
CLIENT = "client"  # the sender of a proxied session's frames (`proxy --trace`, the page's proxy panel)
VERDICTS = {"trusted": ("trusted (allowlisted)", "ok"), "untrusted": ("UNTRUSTED, opted in", "warn"),
            "refused": ("REFUSED: nothing sent", "fail")}
RESULTS = {"trusted": "ok", "untrusted": "warn", "escalated": "warn", "refused": "fail", "error": "fail",
           "warning": "warn"}  # a result line's kind -> its mark's class


def body_of(record: dict[str, Any]) -> Any:
    """A frame's body as JSON, read like any peer input (bounded), or None. A stream (Server-
    Sent Events) is drawn as its last event: where the task got to."""
    body = record.get("body")
    if isinstance(body, str) and body.startswith("data:"):
        events = sse.decode(body.encode(errors="replace"))  # a lone surrogate (JSON spells one; UTF-8 holds none): "?"
        body = events[-1].decode(errors="replace") if events else ""
    try:
        return loads_strict(body) if isinstance(body, str) and body else None
    except ValueError:
        return None


def task_states(body: Any) -> tuple[str, list[str], bool]:
    """(task id, states, whether they are the whole history) from a reply: the essay's wire
    lists result.lifecycle; 1.0 has result.task.status.state; 0.3 result.status.state."""
    result = body.get("result") if isinstance(body, dict) else None
    if not isinstance(result, dict):
        return "", [], False
    wrapped = next((result[key] for key in ("task", "statusUpdate", "artifactUpdate")
                    if isinstance(result.get(key), dict)), None)
    task = wrapped if wrapped is not None else result  # a stream's status event names its task too
    status = task.get("status")
    if isinstance(result.get("lifecycle"), list):
        states, whole = result["lifecycle"], True
    elif isinstance(status, dict) and status.get("state"):
        states, whole = [status["state"]], False
    else:
        states, whole = [], False
    names = [short(state, 40) for state in states]  # 1.0 says TASK_STATE_INPUT_REQUIRED
    names = [n[11:].lower().replace("_", "-") if n.startswith("TASK_STATE_") else n for n in names]
    return short(task.get("id", task.get("taskId", "task")), 40), names, whole


def frame_label(record: dict[str, Any], body: Any) -> tuple[str, str]:
    """What a frame's arrow says, and its class."""
    rid = f" (id {short(record['jsonrpc_id'], 20)})" if record.get("jsonrpc_id") is not None else ""
    status = record.get("http_status")
    if record.get("direction") == "-->":  # a message naming its task is that task's next turn
        params = body.get("params") if isinstance(body, dict) else None
        message = params.get("message") if isinstance(params, dict) else None
        task = message.get("taskId") if isinstance(message, dict) else None
        turn = f": next turn of {short(task, 40)}" if isinstance(task, str) else ""
        return short(record.get("method") or record.get("http_method")) + rid + turn, "send"
    if record.get("binding") == HTTP_JSON.name:  # the result is the whole body; an error, its status
        if not isinstance(status, int) or not 200 <= status < 300:
            error = body.get("error") if isinstance(body, dict) and isinstance(body.get("error"), dict) else {}
            return f"HTTP {short(status, 12)} {short(error.get('status', ''), 30)}".rstrip(), "fail"
        body, status = {"result": body}, 200
    elif record.get("http_method") == "GET":
        return ("agent card", "reply") if status == 200 else (f"HTTP {short(status, 12)}", "fail")
    if status == 202 and not record.get("body") and record.get("jsonrpc_id") is None:
        # JSON-RPC answers no notification, and MCP's HTTP transport says so with 202: all went well
        return "HTTP 202 accepted (a notification gets no reply)", "reply"
    if status != 200:
        return f"HTTP {short(status, 12)}{rid}", "fail"
    if record.get("method") == PUSH and body is not None:  # a StreamResponse: read as a stream's event is
        body, rid = {"result": body}, " (pushed)"
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return f"error {short(body['error'].get('code'), 12)}{rid}", "fail"
    task_id, states, _ = task_states(body)
    result = body.get("result") if isinstance(body, dict) else None
    if isinstance(result, dict) and ("artifactUpdate" in result or result.get("kind") == "artifact-update"):
        return f"{task_id} artifact{rid}", "reply"  # 1.0 wraps it, 0.3 tags it
    if not states:
        return (f"not JSON{rid}", "fail") if body is None else (f"result{rid}", "reply")
    ended = {"failed": "fail", "rejected": "fail", "canceled": "warn", "input-required": "warn",
             "auth-required": "warn"}
    return f"{task_id} {states[-1]}{rid}", ended.get(states[-1], "reply")  # one task, by its id, across turns


def marks_of(step: Step, verdicts: dict[str, str]) -> list[Mark]:
    """The marks one step draws; `verdicts` (peer -> the gate's verdict) is kept up to date.
    What the gate, a failure or a result says is the line the terminal printed for it."""
    record, kind, lane = step.record, step.kind, step.lane or SUPPORT
    peer = short(record.get("peer"), 60)
    if kind == "registry":
        cards = record.get("cards") if isinstance(record.get("cards"), list) else []
        return [Mark(SUPPORT, REGISTRY, f"read registry ({len(cards)} peer{'' if len(cards) == 1 else 's'})",
                     "ask")]
    if kind == "model":
        return [Mark(SUPPORT, MODEL, "which peer and skill?", "ask"),
                Mark(MODEL, SUPPORT, f"chose {short(peer, 32)} / {short(record.get('skill'), 24)}", "warn")]
    if kind == "trust":
        verdicts[peer] = str(record.get("verdict"))
        answer, cls = VERDICTS.get(verdicts[peer], (short(record.get("verdict")), "warn"))
        reason = record.get("reason")  # a trace from before the reason and the line were kept: the verdict
        words = step.said or (f"{peer} {short(reason, 300)}" if isinstance(reason, str) else f"{answer} ({peer})")
        ask = Mark(SUPPORT, GATE, f"trust {short(peer, 32)}?", "ask")
        if verdicts[peer] == "refused":
            return [ask, Mark(GATE, GATE, words, "fail", "stop")]
        return [ask, Mark(GATE, SUPPORT, answer, cls, aside=words)]
    if kind == "failure":  # on the peer's lane the lane names it; on ours (not sent), the line does
        error = short(record.get("error", ""), 400)
        if error.startswith("not sent") or lane == SUPPORT:
            return [Mark(SUPPORT, SUPPORT, step.said or f"{peer}: {error}", "fail", "stop")]
        return [Mark(lane, lane, error, "fail", "stop")]
    if kind == "broken":
        return [Mark(lane, SUPPORT, step.said or "the stream broke off", "warn", "cut")]
    if kind in ("resumed", "result"):
        cls = "ok" if kind == "resumed" else RESULTS.get(str(record.get("line")), "reply")
        return [Mark(SUPPORT, SUPPORT, step.said, cls, "note")]
    if kind == "frame":
        text, cls = frame_label(record, body_of(record))
        if record.get("direction") == "-->":
            return [Mark(SUPPORT, lane, text, cls)]
        if verdicts.get(peer) == "untrusted" and record.get("http_method") == "POST":
            text, cls = f"{text} UNTRUSTED", "warn" if cls != "fail" else cls
        return [Mark(lane, SUPPORT, text, cls)]
    return []


def marked(records: list[Any]) -> tuple[Run, list[list[Mark]]]:
    """The run's steps, and the marks of each."""
    run, verdicts = read_run(records), {}
    return run, [marks_of(step, verdicts) for step in run.steps]


def lanes(run: Run) -> dict[str, tuple[str, str]]:
    """Every lane, in order: lane -> (its name, its host: "" for our own lanes)."""
    kinds = {step.kind for step in run.steps}
    if not kinds & {"registry", "trust", "model"}:  # frames alone (a proxied session): a client sent them,
        return {SUPPORT: (CLIENT, ""), **run.lanes}   # not our agent, and no registry or gate of ours was there
    model = {MODEL: (MODEL, "")} if "model" in kinds else {}
    return {SUPPORT: (SUPPORT, ""), REGISTRY: (REGISTRY, ""), GATE: (GATE, ""), **model, **run.lanes}


def on_two_lanes(labels: dict[str, tuple[str, str]]) -> set[str]:
    """The names more than one lane bears (each such lane is shown with its host), counted once
    each: a trace may name as many hosts as it holds records."""
    seen: set[str] = set()
    twice: set[str] = set()
    for name, _ in labels.values():
        (twice if name in seen else seen).add(name)
    return twice


def title(records: list[Any]) -> str:
    frames = [r for r in records if isinstance(r, dict) and r.get("kind") == "frame"]
    transport = short(frames[0].get("transport"), 90) if frames else "no frames"
    formats = [w for w in dict.fromkeys(short(r.get("wire")) for r in frames) if w not in ("card", "None")]
    return f"over {transport} · " + (f"wire format: {', '.join(formats)}" if formats else "no delegation sent")


def svg(records: list[Any], *, drawn: tuple[Run, list[list[Mark]]] | None = None, fit: bool = False) -> str:
    """The diagram as one SVG document (picture.py); `drawn`: the steps and marks the page
    already has, so its numbers are the page's."""
    run, marks = drawn or marked(records)
    return picture(lanes(run), marks, title(records), fit=fit)


def mermaid(records: list[Any]) -> str:
    run, marks = marked(records)
    labels = lanes(run)
    ids = {lane: f"L{number}" for number, lane in enumerate(labels)}
    twice = on_two_lanes(labels)

    def clean(text: str) -> str:  # Mermaid's syntax has few safe characters
        return "".join(c for c in text if c.isalnum() or c in " -_.,()?:'/").strip()
    out = ["sequenceDiagram", f"    title {clean(title(records))}"]  # a name on two lanes: each with its host
    out += [f"    participant {ids[lane]} as {clean(f'{name} at {host}' if name in twice else name)}"
            for lane, (name, host) in labels.items()]
    for mark in (mark for step in marks for mark in step):
        source, target = ids[mark.source], ids[mark.target]
        if mark.shape == "arrow":
            out.append(f"    {source}{'->>' if mark.source == SUPPORT else '-->>'}{target}: {clean(mark.text)}")
            if mark.aside:
                out.append(f"    Note right of {ids[GATE]}: {clean(mark.aside)}")
        else:
            out.append(f"    Note over {source}{',' + target if mark.shape == 'cut' else ''}: {clean(mark.text)}")
    return "\n".join(out) + "\n"
