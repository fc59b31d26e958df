"""Streams as they arrive, and broken streams picked up again.

Both transports hand a stream over chunk by chunk, so the printer shows an event before
the peer has made the next; a stream that breaks off is followed by a subscription to
the same task (or, for a task that ended meanwhile, GetTask), never by the message
again. Real apps, real frames, in process and over HTTP; the breaks are the test
double's own (peers/doubles.py CutStreams, `serve --cut-streams-after`) or a hostile peer's."""
import json
import random
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import BILLING, BILLING_CARD, cli, serving, support_agent
from peers import billing
from peers.a2a import wire_v10
from peers.app import PeerApp
from peers.support.calling import follow
from transports import sse
from transports.base import HttpResponse
from transports.errors import TransportError
from transports.inprocess import InProcessTransport
from transports.network import HttpTransport
from transports.printer import FramePrinter

CARD_JSON = json.dumps(wire_v10.card_to_wire(billing.billing_agent().card)).encode()
WORKING = {"task": {"id": "t-1", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}}}
DONE = {"statusUpdate": {"taskId": "t-1", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}}}
STREAM_FRAME = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": {
    "message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [
        {"data": {"order_id": "ORD-7", "amount": 5}, "mediaType": "application/json"}],
        "metadata": {"skillId": "process_refund"}}}}).encode()
HEADERS = {"Content-Type": "application/json", "A2A-Version": "1.0"}


def event(result, request_id=1):
    return b"data: " + json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode() + b"\n\n"


# -- the SSE decoder, fed in pieces --------------------------------------------------------

def test_events_read_chunk_by_chunk_are_the_events_of_the_whole_body():
    rng = random.Random(13)
    body = b"data: a\r\n\r\ndata: b\r\rdata:c\n\n: note\n\nevent: x\ndata: d\ndata: e\n\ndata: x\r\n\ndata: cut off\r\n"
    for _ in range(300):  # every way of cutting it, CRLFs split included; the last event never ended: none
        cuts = sorted(rng.sample(range(1, len(body)), rng.randint(1, 12)))
        pieces = [body[i:j] for i, j in zip([0, *cuts], [*cuts, len(body)])]
        assert list(sse.events(iter(pieces))) == sse.decode(body) == [b"a", b"b", b"c", b"d\ne", b"x"]


def test_a_line_dripped_a_byte_at_a_time_is_not_copied_again_and_again():
    decoder = sse.Decoder()
    for _ in range(200_000):  # quadratic copying would take minutes here
        assert decoder.feed(b"x") == []
    assert decoder.feed(b"\n\n") == [] and decoder.end() == []  # "xxx..." is no field: no event


# -- the printer shows an event before the next one is made ---------------------------------

@pytest.mark.parametrize("carrier", ["inprocess", "http"])
def test_the_printer_shows_each_event_before_the_peer_makes_the_next(carrier):
    shown_first = threading.Event()
    waited = []

    def app(request):
        def body():
            yield event(WORKING)
            waited.append(shown_first.wait(5))  # in process: already set; over HTTP: set by the client
            yield event(DONE)
        return HttpResponse(200, {"Content-Type": sse.MEDIA_TYPE}, body())

    def show(text, frame):
        if text.startswith("<-- [1] "):
            shown_first.set()
    if carrier == "http":
        with serving(app) as server:
            printer = FramePrinter(HttpTransport(timeout=5), show)
            response = printer.stream(f"{server.base_url}/a2a", STREAM_FRAME, HEADERS)
            received = b"".join(response.body)
    else:
        printer = FramePrinter(InProcessTransport({"https://peer.example": app}), show)
        received = b"".join(printer.stream("https://peer.example/a2a", STREAM_FRAME, HEADERS).body)
    assert waited == [True], "event [1] was shown before the peer made event [2]"
    assert received == event(WORKING) + event(DONE)
    assert printer.frames[-1].body == received  # recorded whole, once it ended


def test_a_stream_given_up_half_read_hangs_up_and_one_read_to_its_end_is_kept():
    app = PeerApp(billing.billing_agent(), wire_v10)
    with serving(app) as server:
        transport = HttpTransport(timeout=5)
        url = f"{server.base_url}/a2a"
        chunks = transport.stream(url, STREAM_FRAME, HEADERS).body
        next(chunks)
        chunks.close()
        assert transport._connections == {}, "a half-read stream's connection is not reused"
        another = STREAM_FRAME.replace(b"m-1", b"m-2").replace(b"ORD-7", b"ORD-8")  # a refund of its own: the whole story
        whole = b"".join(transport.stream(url, another, HEADERS).body)
        assert len(sse.decode(whole)) == 4 and len(transport._connections) == 1
        transport.close()


# -- a broken stream, picked up again ------------------------------------------------------

def test_the_broken_stream_lesson_subscribes_again_and_prints_the_same_on_both_transports():
    extras = ("", "--transport http", "--wire 0.3")
    with ThreadPoolExecutor(3) as pool:  # each run waits two seconds on billing: wait once
        runs = dict(zip(extras, pool.map(lambda extra: cli("--scenario", "broken-stream", *extra.split()), extras)))
    shown = {extra: [line for line in done.stdout.splitlines() if not line.startswith("[transport]")]
             for extra, done in runs.items()}
    assert shown[""] == shown["--transport http"] and all(done.returncode == 0 for done in runs.values())
    lines = shown[""]
    assert sum('"method": "SendStreamingMessage"' in line for line in lines) == 1, "the message went once"
    broke = lines.index("[support] the stream broke off (the connection broke before a full reply: the peer "
                        "closed it); task task-1 was last seen working: subscribing to it again "
                        "(SubscribeToTask) for what was missed")
    assert lines[broke + 1].startswith('--> {"jsonrpc": "2.0", "id": 2, "method": "SubscribeToTask"')
    # The connection broke as billing completed the task: that completion is what was missed.
    assert lines[broke + 2].startswith('<-- {"jsonrpc": "2.0", "id": 2, "error": {"code": -32004')
    assert lines[broke + 3].startswith("[support] SubscribeToTask was refused (") and "(GetTask)" in lines[broke + 3]
    assert lines[broke + 4].startswith('--> {"jsonrpc": "2.0", "id": 3, "method": "GetTask"')
    assert lines[broke + 6] == "[support] missed while not listening: the task became completed"
    assert sum('"artifactUpdate"' in line for line in lines[:broke]) == 1, "the artifact came before the break"
    assert "[support] task task-1 lifecycle: submitted -> working -> completed" in lines
    assert any(line.startswith("[support] trusted result (from billing-agent): refund of $180.00") for line in lines)
    on_0_3 = runs["--wire 0.3"].stdout  # 0.3 calls the subscription tasks/resubscribe
    assert "subscribing to it again (tasks/resubscribe) for what was missed" in on_0_3
    assert "[support] missed while not listening: the task became completed" in on_0_3
    assert "[support] task task-1 lifecycle: submitted -> working -> completed" in on_0_3


def test_a_task_that_ended_while_the_stream_was_down_is_asked_for_never_sent_again(capsys):
    from peers.doubles import CutStreams
    peer = billing.billing_agent(streams=CutStreams(2))  # fast: the refund is done before the cut is noticed
    app = PeerApp(peer, wire_v10)
    agent, printer, _ = support_agent([BILLING], apps={billing.BASE_URL: app}, wire="1.0", stream=True,
                                      printed=True)
    outcome = agent.handle(BILLING_CARD, "process_refund", {"order_id": "ORD-31", "amount": 12})
    out = capsys.readouterr().out
    methods = [json.loads(f.body)["method"] for f in printer.frames if f.direction == "-->" and f.http_method == "POST"]
    assert methods == ["SendStreamingMessage", "SubscribeToTask", "GetTask"]
    assert "SubscribeToTask was refused (This operation is not supported: task 'task-1' is completed" in out
    assert "[support] missed while not listening: the task became completed; artifact 'task-1-result'" in out
    assert outcome.task.lifecycle[-1].value == "completed" and outcome.error is None
    assert list(peer.ledger.effects) == ["refund of ORD-31"], "refunded once"


def flaky(get_answer):
    """A peer whose every stream says the task is working, then drops; GetTask answers."""
    calls = []

    def app(request):
        if request.method == "GET":
            return HttpResponse(200, {"Content-Type": "application/json"}, CARD_JSON)
        frame = json.loads(request.body)
        calls.append(frame["method"])
        if frame["method"] == "GetTask":
            return HttpResponse(200, {"Content-Type": "application/json"}, json.dumps(
                {"jsonrpc": "2.0", "id": frame["id"], "result": get_answer}).encode())

        def body():
            yield event(WORKING, frame["id"])
            raise ConnectionResetError("dropped")
        return HttpResponse(200, {"Content-Type": sse.MEDIA_TYPE}, body())
    return app, calls


def test_resuming_is_bounded_then_the_task_is_asked_about():
    done = {"id": "t-1", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}}
    app, calls = flaky(done)
    agent, _, _ = support_agent([BILLING], apps={billing.BASE_URL: app}, stream=True, patience=5)
    outcome = agent.handle(BILLING_CARD, "process_refund", {"order_id": "ORD-1", "amount": 5})
    assert calls == ["SendStreamingMessage"] + ["SubscribeToTask"] * follow.RESUMES + ["GetTask"]
    assert outcome.task.state.value == "completed"


def test_a_stream_that_breaks_before_naming_its_task_fails_with_the_retry_advice():
    def app(request):
        if request.method == "GET":
            return HttpResponse(200, {"Content-Type": "application/json"}, CARD_JSON)

        def body():
            yield b": a comment, then nothing\n\n"
            raise ConnectionResetError("dropped")
        return HttpResponse(200, {"Content-Type": sse.MEDIA_TYPE}, body())
    agent, printer, _ = support_agent([BILLING], apps={billing.BASE_URL: app}, stream=True)
    outcome = agent.handle(BILLING_CARD, "process_refund", {"order_id": "ORD-1", "amount": 5})
    assert "the connection broke before a full reply" in outcome.error
    assert "may have been acted on" in outcome.error  # nothing said which task: only the peer knows
    assert len(printer.sent_to(billing.BASE_URL)) == 2  # the card, the one stream: no subscription


def test_serve_cut_streams_after_breaks_each_streamed_send_for_a_clients_resume_tests():
    from conftest import start_serve
    process, lines = start_serve("billing-agent", "--wire", "1.0", "--port", "0", "--cut-streams-after", "1",
                                 env={"A2A_SERVE_TOKEN": "tok-7"})
    try:
        base = lines[0].split("listening on ")[1].split()[0]
        transport = HttpTransport(timeout=5)
        response = transport.stream(f"{base}/a2a", STREAM_FRAME, {**HEADERS, "Authorization": "Bearer tok-7"})
        got = []
        with pytest.raises(TransportError, match="the connection broke before a full reply"):
            for data in sse.events(response.body):
                got.append(json.loads(data))
        assert [list(item["result"]) for item in got] == [["task"]]
        transport.close()
    finally:
        process.terminate()
        process.communicate(timeout=10)
    assert process.returncode == 0


# -- streams are bounded in number -----------------------------------------------------------

def test_streams_beyond_the_peers_slots_are_refused_before_any_work_and_a_slot_comes_back_when_one_ends():
    from peers.streaming import Streams
    peer = billing.billing_agent(streams=Streams(1))  # one slot, so the limit is reached at once
    transport = InProcessTransport({billing.BASE_URL: PeerApp(peer, wire_v10)})
    url = f"{billing.BASE_URL}/a2a"

    def frame(method, params, request_id=1):
        return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode()
    paused = json.loads(transport.post(url, STREAM_FRAME.replace(b"SendStreamingMessage", b"SendMessage").replace(
        b'"amount": 5', b'"amount": 6000').replace(b"m-1", b"m-0").replace(b"ORD-7", b"ORD-70"), HEADERS).body)["result"]["task"]  # waits for a person
    held = transport.stream(url, frame("SubscribeToTask", {"id": paused["id"]}), HEADERS).body
    assert b'"task"' in next(held)  # open, and holding the only slot
    refused = transport.stream(url, frame("SubscribeToTask", {"id": paused["id"]}, 2), HEADERS)
    error = json.loads(refused.body)["error"]
    assert error["code"] == -32050 and "nothing was done" in error["message"]
    tasks = len(peer.store.tasks)
    send = json.loads(transport.stream(url, STREAM_FRAME, HEADERS).body)
    assert send["error"]["code"] == -32050 and len(peer.store.tasks) == tasks, "refused before any task"
    held.close()
    assert len(sse.decode(b"".join(transport.stream(url, STREAM_FRAME, HEADERS).body))) == 4


def test_a_stream_dropped_before_it_was_ever_read_gives_its_slot_back():
    from peers.streaming import Streams
    peer = billing.billing_agent(streams=Streams(1))
    events = peer.streams.send(peer, wire_v10.send_request(json.loads(STREAM_FRAME)["params"]).message)
    del events  # a client that left before the first byte: the generator never started
    assert not peer.streams.open, "the slot came back"


# -- found by a hostile tester (each a regression test) --------------------------------------

def test_a_request_while_a_stream_is_open_gets_its_own_connection_and_the_stream_goes_on():
    seen = []
    gate = threading.Event()

    def app(request):
        frame = json.loads(request.body)
        seen.append(frame["method"])
        if frame["method"] == "stream":
            def body():
                yield b'data: {"first": 1}\n\n'
                gate.wait(5)
                yield b'data: {"second": 2}\n\n'
            return HttpResponse(200, {"Content-Type": sse.MEDIA_TYPE}, body())
        gate.set()
        return HttpResponse(200, {"Content-Type": "application/json"}, b'{"ok": true}')
    with serving(app) as server:
        transport = HttpTransport(timeout=5)
        url = f"{server.base_url}/a2a"
        events = sse.events(transport.stream(url, b'{"method": "stream"}', {"Content-Type": "application/json"}).body)
        assert next(events) == b'{"first": 1}'
        assert transport.post(url, b'{"method": "GetTask"}', {"Content-Type": "application/json"}).body == b'{"ok": true}'
        assert list(events) == [b'{"second": 2}'] and seen == ["stream", "GetTask"]
        transport.close()


@pytest.mark.parametrize("carrier", ["inprocess", "http"])
def test_a_stream_closed_before_its_first_read_hangs_up_and_is_recorded(carrier):
    made = []

    def app(request):
        def body():
            yield event(WORKING)
            yield event(DONE)
        made.append(body())
        return HttpResponse(200, {"Content-Type": sse.MEDIA_TYPE}, made[-1])
    if carrier == "http":
        with serving(app) as server:
            inner = HttpTransport(timeout=5)
            printer = FramePrinter(inner)
            printer.stream(f"{server.base_url}/a2a", STREAM_FRAME, HEADERS).body.close()
            assert inner._connections == {}, "hung up, not kept for the next request"
            assert json.loads(inner.post(f"{server.base_url}/a2a", STREAM_FRAME, HEADERS).body.split(b"data: ")[1])
    else:
        printer = FramePrinter(InProcessTransport({"https://peer.example": app}))
        printer.stream("https://peer.example/a2a", STREAM_FRAME, HEADERS).body.close()
        assert made[0].gi_frame is None, "the app's stream was closed at once"
    assert [frame.direction for frame in printer.frames][:2] == ["-->", "<--"], "the reply is recorded"


@pytest.mark.parametrize("carrier", ["inprocess", "http"])
def test_verbose_shows_a_streams_details_line(carrier):
    done = cli("--wire", "1.0", "--stream", "--verbose", *(["--transport", "http"] if carrier == "http" else []))
    assert done.returncode == 0 and "Traceback" not in done.stderr
    assert "[<-- HTTP 200," in done.stdout


def test_a_stream_that_is_one_finished_task_ends_there_whatever_follows():
    finished = {"task": {"id": "t-1", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"},
                         "artifacts": [{"artifactId": "a", "parts": [{"text": "done"}]}]}}

    def app(request):
        if request.method == "GET":
            return HttpResponse(200, {"Content-Type": "application/json"}, CARD_JSON)
        return HttpResponse(200, {"Content-Type": sse.MEDIA_TYPE}, iter([event(finished), b"data: not json\n\n"]))
    agent, _, _ = support_agent([BILLING], apps={billing.BASE_URL: app}, stream=True)
    outcome = agent.handle(BILLING_CARD, "process_refund", {"order_id": "ORD-1", "amount": 5})
    assert outcome.error is None and outcome.result == "done"


def test_an_event_ended_by_lone_crs_is_given_at_once():
    assert sse.Decoder().feed(b"data: a\r\r") == [b"a"]
    decoder = sse.Decoder()
    assert decoder.feed(b"data: b\r") == [] and decoder.feed(b"\n\r\n") == [b"b"]  # a CRLF split in two
    decoder = sse.Decoder()
    assert [decoder.feed(piece) for piece in (b"data: x\r", b"\n", b"\n", b"data: y\n\n")] == [[], [], [b"x"], [b"y"]]


def test_a_stream_that_times_out_is_a_timeout_and_the_task_is_found_before_any_retry():
    extras = ("", "--transport http")
    with ThreadPoolExecutor(2) as pool:  # found by a reviewer: it once ended with no result and no reason
        runs = list(pool.map(lambda extra: cli("--scenario", "slow", "--stream", *extra.split()), extras))
    for done in runs:
        assert done.returncode == 0 and "Traceback" not in done.stderr
        assert "[support] trusted result (from billing-agent): refund of $95.00 issued for ORD-8800" in done.stdout
        assert sum('"method": "SendStreamingMessage"' in line for line in done.stdout.splitlines()) == 1


def test_a_stream_that_named_its_task_then_went_silent_fails_saying_which_task_to_ask_for():
    """A stream that names its task and then goes silent past --timeout: out of time, nothing is
    known of the outcome, so the failure says retry is NOT safe. It now also says which task to
    ask for, and where it was last seen (second hostile round: it had said neither)."""
    import a2a_delegation as story
    from conftest import following_in
    from peers.support.calling.config import AllowEntry
    let_go = threading.Event()

    def app(request):
        if request.method == "GET":
            card = wire_v10.card_to_wire(billing.billing_agent(base).card)
            return HttpResponse(200, {"Content-Type": "application/json"}, json.dumps(card).encode())
        frame = json.loads(request.body)

        def body():
            yield event(WORKING, frame["id"])
            let_go.wait(5)  # silent past the client's timeout
        return HttpResponse(200, {"Content-Type": sse.MEDIA_TYPE}, body())
    with serving(app, idle_timeout=10.0) as server:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        agent = story.SupportAgent(FramePrinter(HttpTransport(timeout=1)), [AllowEntry("billing-agent", f"{base}/a2a")],
                                   {f"{base}/a2a": "t0k"}, lambda *args, **facts: None,
                                   **following_in({"stream": True, "patience": 1}))
        try:
            (outcome,) = story.run(agent, [f"{base}/.well-known/agent-card.json"])
        finally:
            let_go.set()
    assert outcome.error.startswith("delegation failed: ") and "retry is NOT safe" in outcome.error, outcome.error
    assert "task t-1 was last seen working: ask for it (GetTask) before any retry" in outcome.error, outcome.error
