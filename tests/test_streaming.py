"""Streaming: SendStreamingMessage / message/stream answer with Server-Sent Events, one
JSON-RPC response per event; SubscribeToTask gives a waiting task; the support agent
streams with --stream where the card offers it, and the printer shows each event on its
own numbered line. Real frames through the real apps, in process and over HTTP, and
hostile streams from a peer we do not own."""
import json
import time

import pytest

from conftest import BILLING, BILLING_CARD, Client, cli_once, cli_together, support_agent
from peers import billing
from peers.a2a import wire_v03, wire_v10
from peers.app import PeerApp
from transports import sse
from transports.base import HttpResponse


# -- the SSE codec ---------------------------------------------------------------------

def test_an_event_cut_off_by_the_end_is_discarded_and_its_bytes_are_counted():
    """What the end of a stream discards is counted (its data lines), so a reader can say why an
    event it saw arrive is none; a comment or a stray field left unended is not an event's."""
    for body, unended in [(b"data: a\n\ndata: b\n", 7), (b"data: a\n\ndata: xy", 8), (b"data: a\n\n", 0),
                          (b"data: a\n\n: a comment", 0), (b"data: a\ndata: b\n", 14)]:
        decoder = sse.Decoder()
        events = decoder.feed(body) + decoder.end()
        assert (events, decoder.unended) == (([b"a"] if body.startswith(b"data: a\n\n") else []), unended), body


@pytest.mark.parametrize("body, events", [
    (b"data: a\n\ndata: b\n\n", [b"a", b"b"]),
    (b"data: a\r\n\r\ndata:b\r\rdata: c", [b"a", b"b"]),  # CRLF, CR, no space; cut off before its blank line
    (b"data: a\n\ndata: b\n", [b"a"]),  # its line ended, its event did not: discarded at the end, as the standard says
    (b": a comment\nevent: x\nid: 7\nretry: 3\ndata: a\ndata: b\n\n", [b"a\nb"]),
    (b"event: only\n\n\n\n", []), (b"", []), (b"dataX: no\n\n", []),
])
def test_server_sent_events_are_read_as_the_html_standard_says(body, events):
    assert sse.decode(body) == events


def test_a_stream_of_endless_events_is_cut_at_the_bound():
    assert len(sse.decode(b"data: x\n\n" * (sse.MAX_EVENTS + 5))) == sse.MAX_EVENTS


def test_encode_then_decode_gives_the_frames_back():
    frames = [b'{"a": 1}', b'{"b": [2]}']
    assert sse.decode(sse.encode(frames)) == frames


# -- the server --------------------------------------------------------------------------

def stream(client, method, params, headers=None, transport=None):
    client.ids += 1
    frame = json.dumps({"jsonrpc": "2.0", "id": client.ids, "method": method, "params": params})
    from conftest import HEADERS
    response = (transport or client.transport).post(client.url, frame.encode(), headers or HEADERS)
    assert response.status == 200
    if not sse.is_stream(response.header("Content-Type")):
        return json.loads(response.body)
    return [json.loads(event) for event in sse.decode(response.body)]


def refund(message_id, amount=5, **fields):
    return {"message": {"messageId": message_id, "role": "ROLE_USER", "metadata": {"skillId": "process_refund"},
                        "parts": [{"data": {"order_id": "ORD-1", "amount": amount}}], **fields}}


def test_a_streamed_refund_is_the_task_then_each_state_then_its_artifact_then_the_end(client):
    events = [event["result"] for event in stream(client, "SendStreamingMessage", refund("m-1"))]
    assert [next(iter(e)) for e in events] == ["task", "statusUpdate", "artifactUpdate", "statusUpdate"]
    assert events[0]["task"]["status"]["state"] == "TASK_STATE_SUBMITTED" and "artifacts" not in events[0]["task"]
    assert [e["statusUpdate"]["status"]["state"] for e in (events[1], events[3])] == [
        "TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]
    assert events[2]["artifactUpdate"]["artifact"]["parts"] == [{"text": "refund of $5.00 issued for ORD-1 (ref BILL-ORD-1)"}]
    assert {e[next(iter(e))].get("taskId", e[next(iter(e))].get("id")) for e in events} == {"task-1"}
    assert client.refunds() == ["refund of $5.00 issued for ORD-1 (ref BILL-ORD-1)"], "streamed, done once"
    again = client.call("GetTask", {"id": "task-1"})["result"]
    assert again["status"]["state"] == "TASK_STATE_COMPLETED"


def test_0_3_streams_bare_events_tagged_by_kind_with_final_on_the_last():
    client = Client("in-process", wire=wire_v03)
    params = {"message": {"kind": "message", "messageId": "m-1", "role": "user", "metadata": {"skillId": "process_refund"},
                          "parts": [{"kind": "data", "data": {"order_id": "ORD-1", "amount": 5}}]}}
    events = [event["result"] for event in stream(client, "message/stream", params, {"Content-Type": "application/json",
                                                                                       "Authorization": "Bearer t0k"})]
    assert [e["kind"] for e in events] == ["task", "status-update", "artifact-update", "status-update"]
    assert [e.get("final") for e in events] == [None, False, None, True]
    assert events[2]["append"] is False and events[2]["lastChunk"] is False


@pytest.mark.parametrize("wire", [wire_v03, wire_v10])
def test_a_streamed_sends_task_event_has_the_history_the_send_asked_for_as_a_sends_answer_has(wire):
    """historyLength is the send's configuration, streamed or not: the stream's Task event kept
    the whole history whatever it asked."""
    client = Client("in-process", wire=wire)
    headers = {"Content-Type": "application/json", "Authorization": "Bearer t0k"}
    if wire is wire_v10:
        method, headers = "SendStreamingMessage", {**headers, "A2A-Version": "1.0"}
    else:
        method = "message/stream"
    for asked, kept in [(0, 0), (1, 1), (None, 1)]:
        params = refund(f"m-{asked}")
        if wire is wire_v03:
            params["message"].update(kind="message", role="user", parts=[{"kind": "data", "data": {
                "order_id": f"ORD-{asked}", "amount": 5}}])
        if asked is not None:
            params["configuration"] = {"historyLength": asked}
        first = stream(client, method, params, headers)[0]["result"]
        task = first if wire is wire_v03 else first["task"]
        assert len(task.get("history", [])) == kept, (asked, task)


def test_a_follow_up_streams_from_where_the_task_was_and_a_subscriber_sees_it_as_it_happens(client):
    import threading
    import time
    paused = stream(client, "SendStreamingMessage", refund("m-1", 6000))
    task_id = paused[0]["result"]["task"]["id"]
    assert paused[-1]["result"]["statusUpdate"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    from transports.network import HttpTransport
    own = HttpTransport(timeout=5) if client.url.startswith("http://") else client.transport  # one per thread
    seen = []
    subscriber = threading.Thread(target=lambda: seen.extend(stream(client, "SubscribeToTask", {"id": task_id},
                                                                    transport=own)))
    subscriber.start()
    for _ in range(500):  # bounded: until the subscriber waits on the task (it follows the change feed)
        if client.peer.changes.followers:
            break
        time.sleep(0.01)
    proposal = {"order_id": "ORD-1", "amount": 6000.0, "currency": "USD"}
    go = {"message": {"messageId": "m-2", "role": "ROLE_USER", "taskId": task_id, "parts": [{"data": {"approval": proposal}}]}}
    turn = [e["result"] for e in stream(client, "SendStreamingMessage", go)]
    subscriber.join(5)
    assert not subscriber.is_alive(), "the subscription ended with the task"
    watched = [e["result"] for e in seen]
    assert watched[0]["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert [e["statusUpdate"]["status"]["state"] for e in watched if "statusUpdate" in e] == [
        "TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]
    assert any("artifactUpdate" in e for e in watched)
    assert turn[0]["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", "the task as this turn found it"
    assert [e["statusUpdate"]["status"]["state"] for e in turn if "statusUpdate" in e] == [
        "TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]
    finished = stream(client, "SubscribeToTask", {"id": task_id})
    assert finished["error"]["code"] == -32004, "a finished task has no more events: a plain JSON error"


def test_a_finished_turn_streamed_again_is_the_task_as_it_is_its_artifact_and_word_included(client):
    """A retry after a stream broke off: the turn was taken once, and its stream again is the task,
    whole, as a subscription begins and as SendMessage answers. It was one event: the task completed,
    its artifacts and status message cleared, as the first event of a turn's stream is."""
    task_id = stream(client, "SendStreamingMessage", refund("m-1", 6000))[0]["result"]["task"]["id"]
    proposal = {"order_id": "ORD-1", "amount": 6000.0, "currency": "USD"}
    go = {"message": {"messageId": "m-2", "role": "ROLE_USER", "taskId": task_id, "parts": [{"data": {"approval": proposal}}]}}
    stream(client, "SendStreamingMessage", go)
    again = [e["result"] for e in stream(client, "SendStreamingMessage", go)]
    assert len(again) == 1 and again[0]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert again[0]["task"]["artifacts"][0]["parts"][0]["text"].startswith("refund of $6,000.00 issued for ORD-1")
    assert "refund of $6,000.00" in again[0]["task"]["status"]["message"]["parts"][0]["text"]
    assert client.refunds() == ["refund of $6,000.00 issued for ORD-1 (ref BILL-ORD-1)"]


@pytest.mark.parametrize("method, params, code", [
    ("SendStreamingMessage", {"message": {"messageId": "m", "role": "ROLE_USER", "parts": []}}, -32602),
    ("SendStreamingMessage", {"message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "x"}]}}, -32602),
    ("SubscribeToTask", {"id": "task-404"}, -32001), ("SubscribeToTask", {"id": ["x"]}, -32602),
    ("SubscribeToTask", [], -32602),
])
def test_a_stream_that_cannot_start_is_one_plain_json_error(client, method, params, code):
    answer = stream(client, method, params)
    assert isinstance(answer, dict) and answer["error"]["code"] == code
    assert client.refunds() == []


def test_another_callers_task_cannot_be_subscribed_to(client):
    task_id = stream(client, "SendStreamingMessage", refund("m-1", 6000))[0]["result"]["task"]["id"]
    stranger = PeerApp(client.peer, wire_v10, token="other")
    from transports.inprocess import InProcessTransport
    frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": task_id}}).encode()
    answer = InProcessTransport({billing.BASE_URL: stranger}).post(
        billing.BASE_URL + "/a2a", frame, {"Content-Type": "application/json", "A2A-Version": "1.0",
                                          "Authorization": "Bearer other"})
    assert json.loads(answer.body)["error"]["code"] == -32001


# -- the support agent -------------------------------------------------------------------

def test_with_stream_the_support_agent_streams_and_prints_each_event_the_same_on_both_transports():
    runs = cli_together(*[("--wire", "1.0", "--stream", *extra) for extra in ([], ["--transport", "http"])])
    shown = [[line for line in done.stdout.splitlines() if not line.startswith("[transport]")] for done in runs]
    assert shown[0] == shown[1] and runs[0].returncode == 0
    lines = shown[0]
    assert ("<-- a stream of events, each shown as it arrives, numbered [1], [2] ... by the workbench "
            "(the numbers are not part of the protocol)") in lines
    numbered = [line for line in lines if line.startswith("<-- [")]
    assert [line.split("]")[0] for line in numbered] == ["<-- [1", "<-- [2", "<-- [3", "<-- [4"]
    assert "[support] task task-1 lifecycle: submitted -> working -> completed" in lines
    assert any(line.startswith("[support] trusted result (from billing-agent): refund of $180.00") for line in lines)


def test_without_a_streaming_card_stream_changes_nothing():
    done = cli_once("--stream")  # the essay's card says streaming: false
    assert done.returncode == 0 and "SendStreamingMessage" not in done.stdout and "message/stream" not in done.stdout
    assert "tasks/send" in done.stdout


def hostile(body, content_type="text/event-stream"):
    card = json.dumps(wire_v10.card_to_wire(billing.billing_agent().card)).encode()

    def app(request):
        if request.method == "GET":
            return HttpResponse(200, {"Content-Type": "application/json"}, card)
        return HttpResponse(200, {"Content-Type": content_type}, body)
    agent, printer, _ = support_agent([BILLING], apps={billing.BASE_URL: app}, stream=True)
    return agent.handle(BILLING_CARD, "process_refund", {"order_id": "ORD-1", "amount": 5}), printer


def event(result, request_id=1):
    return b"data: " + json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode() + b"\n\n"


TASK = {"task": {"id": "t-1", "contextId": "c", "status": {"state": "TASK_STATE_SUBMITTED"}}}
DONE = {"statusUpdate": {"taskId": "t-1", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}}}


@pytest.mark.parametrize("body, why", [
    (b"", "the stream described no task"),
    (b"data: not json\n\n", "not"),
    (event(TASK, request_id=2), "id"),
    (event({"surprise": 1}), "none of a task"),
    (event(DONE), "the stream described no task"),  # an update for a task never announced
    (event(TASK) + b"data: {\"jsonrpc\": \"2.0\", \"id\": 1, \"error\": {\"code\": -32603, \"message\": \"boom\"}}\n\n", "boom"),
    (event({"statusUpdate": {"taskId": "t-1", "status": {"state": "TASK_STATE_NONSENSE"}}}), "state"),
])
def test_a_hostile_stream_is_one_line_of_failure_never_a_traceback(body, why):
    outcome, _ = hostile(body)
    assert outcome.task is None and outcome.error and why in outcome.error, outcome.error


def test_events_about_another_task_do_not_change_the_one_streamed():
    other = {"statusUpdate": {"taskId": "t-2", "contextId": "c", "status": {"state": "TASK_STATE_FAILED"}}}
    outcome, _ = hostile(event(TASK) + event(other) + event(DONE))
    assert [state.value for state in outcome.task.lifecycle] == ["submitted", "completed"]


def test_a_stream_of_many_events_is_read_within_bounds():
    outcome, printer = hostile(event(TASK) + event(DONE) * 20_000)
    assert [state.value for state in outcome.task.lifecycle] == ["submitted", "completed"], "nothing after the end"


def test_a_state_said_again_and_again_is_entered_once_so_the_lifecycle_line_stays_short(capsys):
    """A stream (or pushes) repeating "working" 10,000 times made a lifecycle of 10,002 states, and the
    report line of the task 120,000 characters long: a status in the state the task is in enters nothing."""
    working = {"statusUpdate": {"taskId": "t-1", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}}}
    card = json.dumps(wire_v10.card_to_wire(billing.billing_agent().card)).encode()
    body = event(TASK) + event(working) * 10_000 + event(DONE)

    def app(request):
        if request.method == "GET":
            return HttpResponse(200, {"Content-Type": "application/json"}, card)
        return HttpResponse(200, {"Content-Type": "text/event-stream"}, body)
    agent, _, _ = support_agent([BILLING], apps={billing.BASE_URL: app}, stream=True, printed=True)
    outcome = agent.handle(BILLING_CARD, "process_refund", {"order_id": "ORD-1", "amount": 5})
    assert [state.value for state in outcome.task.lifecycle] == ["submitted", "working", "completed"]
    said = [line for line in capsys.readouterr().out.splitlines() if line.startswith("[support] task t-1")]
    assert said == ["[support] task t-1 lifecycle: submitted -> working -> completed"], [line[:200] for line in said]


def test_a_subscription_that_sees_no_change_closes_at_its_deadline():
    import time
    from peers.a2a.model import Message, Part
    peer = billing.billing_agent()
    task = peer.send_message(Message("m-1", "user", (Part(data={"order_id": "ORD-1", "amount": 6000}),),
                                     metadata={"skillId": "process_refund"}))
    started = time.monotonic()
    events = list(peer.streams.watch(peer, task.id, seconds=0.2))
    assert [type(event).__name__ for event in events if event is not None] == ["Task"]
    assert 0.15 < time.monotonic() - started < 2


# -- long tasks without holding a connection: returnImmediately, and asking again ---------

def test_return_immediately_answers_submitted_and_the_work_goes_on(client):
    import time
    answer = client.call("SendMessage", {**refund("m-1"), "configuration": {"returnImmediately": True}})["result"]["task"]
    assert answer["status"]["state"] == "TASK_STATE_SUBMITTED"
    for _ in range(50):  # bounded: the work is instant, the thread only needs a moment
        if client.call("GetTask", {"id": answer["id"]})["result"]["status"]["state"] == "TASK_STATE_COMPLETED":
            break
        time.sleep(0.02)
    assert client.call("GetTask", {"id": answer["id"]})["result"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert client.refunds() == ["refund of $5.00 issued for ORD-1 (ref BILL-ORD-1)"]


@pytest.mark.parametrize("configuration", [{"returnImmediately": "yes"}, {"returnImmediately": 1}, {"blocking": "no"}])
def test_a_configuration_that_is_not_true_or_false_is_refused_before_any_work(configuration):
    wire, method = (wire_v03, "message/send") if "blocking" in configuration else (wire_v10, "SendMessage")
    client = Client("in-process", wire=wire)
    params = refund("m-1") if wire is wire_v10 else {"message": {
        "kind": "message", "messageId": "m-1", "role": "user", "metadata": {"skillId": "process_refund"},
        "parts": [{"kind": "data", "data": {"order_id": "ORD-1", "amount": 5}}]}}
    headers = None if wire is wire_v10 else {"Content-Type": "application/json", "Authorization": "Bearer t0k"}
    answer = stream(client, method, {**params, "configuration": configuration}, headers)
    assert answer["error"]["code"] == -32602 and client.refunds() == []


def test_background_work_is_bounded_and_beyond_the_bound_the_caller_waits():
    from peers import peer as core
    from transports.inprocess import InProcessTransport
    app = PeerApp(billing.billing_agent(slow=1.0), wire_v10, token="t0k")  # busy far longer than 17 posts take
    transport = InProcessTransport({billing.BASE_URL: app})
    states = []
    for n in range(core.MAX_BACKGROUND + 1):
        frame = json.dumps({"jsonrpc": "2.0", "id": n, "method": "SendMessage", "params": {
            **refund(f"m-{n}"), "configuration": {"returnImmediately": True}}}).encode()
        frame = frame.replace(b'"ORD-1"', f'"ORD-{n}"'.encode())
        from conftest import HEADERS
        states.append(json.loads(transport.post(billing.BASE_URL + "/a2a", frame, HEADERS).body)
                      ["result"]["task"]["status"]["state"])
    assert states[:core.MAX_BACKGROUND] == ["TASK_STATE_SUBMITTED"] * core.MAX_BACKGROUND
    assert states[core.MAX_BACKGROUND:] == ["TASK_STATE_COMPLETED"], "no more threads: done while it waits"


def test_with_no_wait_the_support_agent_asks_again_until_the_task_ends_on_both_transports():
    for extra in ([], ["--transport", "http"]):
        done = cli_once("--wire", "1.0", "--no-wait", *extra)
        sent = [json.loads(line[4:]) for line in done.stdout.splitlines() if line.startswith("--> {")]
        assert sent[0]["params"]["configuration"] == {"returnImmediately": True}
        assert {m["method"] for m in sent[1:]} == {"GetTask"} and 1 <= len(sent[1:]) <= 5
        assert "[support] task task-1 is submitted: asking again in 0.1s" in done.stdout
        assert "[support] trusted result (from billing-agent): refund of $180.00" in done.stdout


def still_working(task_id="t-1"):
    working = {"id": task_id, "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}}

    def answer(request):
        frame = json.loads(request.body)
        result = {"task": working} if frame["method"] == "SendMessage" else working
        return HttpResponse(200, {"Content-Type": "application/json"},
                            json.dumps({"jsonrpc": "2.0", "id": frame["id"], "result": result}).encode())
    return answer


def agent_with(answer, patience):
    card = json.dumps(wire_v10.card_to_wire(billing.billing_agent().card)).encode()

    def app(request):
        if request.method == "GET":
            return HttpResponse(200, {"Content-Type": "application/json"}, card)
        return answer(request)
    agent, printer, _ = support_agent([BILLING], apps={billing.BASE_URL: app}, patience=patience)
    return agent, printer


def test_a_task_that_never_ends_is_asked_about_within_the_deadline_and_reported_as_working():
    import time
    agent, printer = agent_with(still_working(), patience=1.0)
    started = time.monotonic()
    outcome = agent.handle(BILLING_CARD, "process_refund", {"order_id": "ORD-1", "amount": 5})
    assert time.monotonic() - started < 2.5 and outcome.variant.label == "working"
    asks = [f for f in printer.frames if f.direction == "-->" and b'"GetTask"' in f.body]
    assert 2 <= len(asks) <= 6, "the pauses grow: a second brings a handful of asks, not hundreds"


def test_the_last_ask_about_a_task_that_never_ends_comes_just_before_the_deadline_not_a_pause_early():
    import time
    asked, answer = [], still_working()

    def timed(request):
        asked.append(time.monotonic())
        return answer(request)
    agent, _ = agent_with(timed, patience=3.0)  # pauses 0.1 0.2 0.4 0.8 then 1.6: past the deadline
    started = time.monotonic()
    outcome = agent.handle(BILLING_CARD, "process_refund", {"order_id": "ORD-1", "amount": 5})
    assert outcome.variant.label == "working" and time.monotonic() - started < 4.0
    assert asked[-1] - started >= 2.7, f"the last ask came {3.0 - (asked[-1] - started):.1f} s before the deadline"


def test_a_get_task_that_answers_about_another_task_is_a_protocol_violation():
    def answer(request):
        frame = json.loads(request.body)
        task = {"id": "t-1" if frame["method"] == "SendMessage" else "t-OTHER", "status": {"state": "TASK_STATE_WORKING"}}
        result = {"task": task} if frame["method"] == "SendMessage" else task
        return HttpResponse(200, {"Content-Type": "application/json"},
                            json.dumps({"jsonrpc": "2.0", "id": frame["id"], "result": result}).encode())
    agent, _ = agent_with(answer, patience=2.0)
    outcome = agent.handle(BILLING_CARD, "process_refund", {"order_id": "ORD-1", "amount": 5})
    assert outcome.task is None and "answered about another" in outcome.error


@pytest.mark.parametrize("after", [b"data: not json\n\n", event(TASK, request_id=9), event({"surprise": 1}),
                                   b'data: {"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "x"}}\n\n'])
def test_nothing_after_the_event_that_ends_a_stream_is_even_read(after):
    outcome, _ = hostile(event(TASK) + event(DONE) + after)
    assert outcome.task is not None and outcome.task.state.value == "completed", outcome.error


def test_a_stream_that_stops_while_the_task_still_works_is_asked_about_again():
    working = {"statusUpdate": {"taskId": "t-1", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}}}
    done = {"id": "t-1", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"},
            "artifacts": [{"artifactId": "a", "parts": [{"text": "refund of $5.00 issued for ORD-1"}]}]}
    card = json.dumps(wire_v10.card_to_wire(billing.billing_agent().card)).encode()

    def app(request):
        if request.method == "GET":
            return HttpResponse(200, {"Content-Type": "application/json"}, card)
        frame = json.loads(request.body)
        if frame["method"] == "GetTask":
            return HttpResponse(200, {"Content-Type": "application/json"},
                                json.dumps({"jsonrpc": "2.0", "id": frame["id"], "result": done}).encode())
        return HttpResponse(200, {"Content-Type": "text/event-stream"},
                            event(TASK, frame["id"]) + event(working, frame["id"]))
    agent, printer, _ = support_agent([BILLING], apps={billing.BASE_URL: app}, stream=True, patience=3.0)
    outcome = agent.handle(BILLING_CARD, "process_refund", {"order_id": "ORD-1", "amount": 5})
    assert outcome.result == "refund of $5.00 issued for ORD-1"
    assert any(b'"GetTask"' in frame.body for frame in printer.frames if frame.direction == "-->")


def test_a_chunked_artifact_is_one_artifact_with_every_chunk():
    from peers.a2a.model import Artifact, Part, Task
    from peers.a2a.stream import ArtifactUpdate, StatusUpdate, fold
    from peers.a2a.model import TaskState
    events = [Task("t"), ArtifactUpdate("t", None, Artifact("a", (Part(text="chunk-1 "),))),
              ArtifactUpdate("t", None, Artifact("a", (Part(text="chunk-2"),)), append=True, last_chunk=True),
              StatusUpdate("t", None, TaskState.COMPLETED, final=True)]
    folded = fold(iter(events))
    assert [artifact.text for artifact in folded.artifacts] == ["chunk-1 chunk-2"]


def test_an_in_process_subscription_keeps_the_callers_deadline():
    import time
    from transports.errors import TransportError
    from transports.inprocess import InProcessTransport
    from conftest import HEADERS
    app = PeerApp(billing.billing_agent(), wire_v10, token="t0k")
    transport = InProcessTransport({billing.BASE_URL: app}, timeout=0.5)
    post = lambda frame: transport.post(billing.BASE_URL + "/a2a", json.dumps(frame).encode(), HEADERS)  # noqa: E731
    task = json.loads(post({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": refund("m-1", 6000)}).body)
    started = time.monotonic()
    with pytest.raises(TransportError) as waited:
        post({"jsonrpc": "2.0", "id": 2, "method": "SubscribeToTask", "params": {"id": task["result"]["task"]["id"]}})
    assert waited.value.timed_out and time.monotonic() - started < 2


def test_a_subscriber_that_hangs_up_frees_its_connection_within_seconds():
    import socket
    import time
    from conftest import HEADERS, serving
    from peers.a2a.model import Message, Part
    from transports.network import HttpTransport
    app = PeerApp(billing.billing_agent(), wire_v10, token="t0k")
    with serving(app, max_connections=2) as server:
        task = app.peer.send_message(Message("m-1", "user", (Part(data={"order_id": "ORD-1", "amount": 6000}),),
                                             metadata={"skillId": "process_refund"}), owner=app.owner)
        frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": task.id}}).encode()
        head = "".join(f"{k}: {v}\r\n" for k, v in HEADERS.items())
        subscribers = []
        for _ in range(2):  # every slot taken by a subscription
            sock = socket.create_connection(server.server_address[:2], timeout=3)
            sock.sendall(f"POST /a2a HTTP/1.1\r\nHost: x\r\n{head}Content-Length: {len(frame)}\r\n\r\n".encode() + frame)
            sock.recv(200)  # the stream has begun
            subscribers.append(sock)
        for sock in subscribers:
            sock.close()  # they hang up
        deadline, status = time.monotonic() + 5, None
        while time.monotonic() < deadline and status != 200:
            time.sleep(0.25)
            http = HttpTransport(timeout=2)
            status = http.get(server.base_url + "/.well-known/agent-card.json", {}).status
            http.close()
        assert status == 200, "a hung-up subscription gave its slot back within seconds, not at 30 s"


@pytest.mark.parametrize("message_id", ["m-1", "m-2"], ids=["the same message again", "the same refund asked anew"])
def test_a_first_message_answered_with_an_earlier_task_streams_that_task_as_it_is(client, message_id):
    """A resend, or the same refund under a new messageId, is answered with the task that did it,
    completed: its stream replayed that task's lifecycle from submitted, old timestamps and all,
    where GetTask said completed. It is the task as it is now, one event, its word included."""
    first = stream(client, "SendStreamingMessage", refund("m-1"))
    task_id = first[0]["result"]["task"]["id"]
    again = [e["result"] for e in stream(client, "SendStreamingMessage", refund(message_id))]
    assert len(again) == 1 and again[0]["task"]["id"] == task_id, again
    assert again[0]["task"]["status"]["state"] == "TASK_STATE_COMPLETED" and again[0]["task"]["artifacts"]
    assert client.refunds() == ["refund of $5.00 issued for ORD-1 (ref BILL-ORD-1)"]


def test_a_streams_last_status_carries_the_word_get_task_gives(client):
    """The completed event had no status message, where GetTask's status has the result: a client
    building the task from the stream (as the SDKs' task managers do) had another task."""
    events = [event["result"] for event in stream(client, "SendStreamingMessage", refund("m-1"))]
    told = events[-1]["statusUpdate"]["status"]
    asked = client.call("GetTask", {"id": events[0]["task"]["id"]})["result"]["status"]
    assert told["message"]["parts"] == asked["message"]["parts"] == [
        {"text": "refund of $5.00 issued for ORD-1 (ref BILL-ORD-1)"}]


@pytest.mark.parametrize("wire", ["1.0", "0.3"])
@pytest.mark.parametrize("binding", [None, "HTTP+JSON"], ids=["JSON-RPC", "HTTP+JSON"])
def test_a_stream_is_asked_for_as_one_and_every_other_request_as_json(wire, binding):
    """The SDKs' clients ask for a stream with Accept: text/event-stream; ours sent none over
    JSON-RPC, and application/json over HTTP+JSON, which a strict server may answer 406."""
    if binding and wire == "0.3":
        pytest.skip("0.3's cards here offer JSON-RPC only")
    agent, printer, _ = support_agent([BILLING], wire=wire, stream=True, **({"binding": binding} if binding else {}))
    outcome = agent.handle(BILLING_CARD, "process_refund", {"order_id": "ORD-7", "amount": 5})
    assert outcome.result is not None, outcome.error
    sent = [frame for frame in printer.frames if frame.direction == "-->" and frame.http_method == "POST"]
    streamed = [frame for frame in sent if any(name in frame.body for name in (b'"SendStreamingMessage"', b'"message/stream"'))
                or frame.url.endswith(":stream")]
    assert streamed and all(frame.headers.get("Accept") == "text/event-stream" for frame in streamed), sent
    assert all(frame.headers.get("Accept") in (None, "application/json") for frame in sent if frame not in streamed)


def test_a_resent_message_whose_task_waits_for_its_caller_streams_it_and_ends(client):
    """The task as it is, one event, and the end: a paused task is neither ended nor told by a final
    status in that one event, so the stream waited out its 30 s for a change that was not coming."""
    first = [e["result"] for e in stream(client, "SendStreamingMessage", refund("m-1", 6000))]
    assert first[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    began = time.monotonic()
    again = [e["result"] for e in stream(client, "SendStreamingMessage", refund("m-1", 6000))]
    assert [e["task"]["status"]["state"] for e in again] == ["TASK_STATE_INPUT_REQUIRED"]
    assert time.monotonic() - began < 3
