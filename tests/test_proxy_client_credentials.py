"""A client's credentials never show through the proxy, not even when the agent says them back:
its Authorization (and any secret header, and a Basic credential decoded) and its body's secret
fields are masked in the frame lines and in the --trace file, in an answer's body, in a header
of any name, and in a stream's events."""
import json
from types import SimpleNamespace

from proxy_helpers import TLS_FLAGS, Lines
from peers.support.learner.trace import Recorder
from peers.support.proxy.faults import Faults
from peers.support.proxy.run import build
from transports.base import HttpResponse
from transports.network import HttpTransport
from transports.server import PeerServer

TOKEN = "client-bearer-7f3a9c1e"
KEY = "client-api-key-55d0e2"


def echoing(request):
    """An agent that quotes back every credential it was sent."""
    said = f"{request.headers.get('authorization')} {request.headers.get('x-api-key')}"
    if request.url.endswith("/stream"):
        event = json.dumps({"jsonrpc": "2.0", "id": 5, "result": {"kind": "message", "said": said}})
        return HttpResponse(200, {"Content-Type": "text/event-stream"}, iter([f"data: {event}\n\n".encode()]))
    error = {"jsonrpc": "2.0", "id": 5, "error": {"code": -32600, "message": f"not accepted: {said}"}}
    return HttpResponse(200, {"Content-Type": "application/json", "X-Echo": said}, json.dumps(error).encode())


def test_a_credential_the_agent_says_back_is_masked_on_screen_and_in_the_trace(tmp_path):
    agent = PeerServer(echoing, "127.0.0.1", 0, idle_timeout=2.0).start()
    lines, recorder = Lines(), Recorder("HTTP through the proxy")
    settings = SimpleNamespace(to=agent.base_url, port=0, verbose=True, keep_card=False, timeout=5.0, step=False, webhook=False, allow_host=(),
                               **dict.fromkeys(TLS_FLAGS))
    server, _, upstream = build(settings, lines, Faults([]), recorder)
    server.start()
    try:
        asked = b'{"jsonrpc": "2.0", "id": 5, "method": "GetTask", "params": {"id": "t"}}'
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}", "X-API-Key": KEY}
        answer = HttpTransport(timeout=5).post(server.base_url + "/a2a", asked, headers)
        assert TOKEN in answer.body.decode()  # forwarded as it came: the client gets it back
        stream = HttpTransport(timeout=5).stream(server.base_url + "/stream", asked, headers)
        assert KEY in b"".join(stream.body).decode()
    finally:
        server.stop()
        upstream.close()
        agent.stop()
    recorder.write(str(tmp_path / "trace.jsonl"))
    trace = (tmp_path / "trace.jsonl").read_text()
    shown = lines.text()
    assert "X-Echo" in shown and "not accepted" in shown and "said" in trace  # the echoes were shown and traced
    for secret in (TOKEN, KEY):
        assert secret not in shown, shown
        assert secret not in trace


def quoting(request):
    """An agent that says back what a Basic credential encodes, decoded, and the request's body whole."""
    import base64
    pair = base64.b64decode(request.headers.get("authorization", " ").split()[1]).decode()
    said = {"jsonrpc": "2.0", "id": 5, "error": {"code": -32600, "message": "no", "data": {
        "basicDecoded": pair, "password": pair.partition(":")[2], "bodyRaw": request.body.decode()}}}
    return HttpResponse(200, {"Content-Type": "application/json"}, json.dumps(said).encode())


def test_a_basic_credential_said_back_decoded_and_a_body_secret_said_back_are_masked_too(tmp_path):
    """The proxy masked the client's secret field on the way in and printed it in clear on the
    way back, and the user:password a Basic header encodes too."""
    import base64
    agent = PeerServer(quoting, "127.0.0.1", 0, idle_timeout=2.0).start()
    lines, recorder = Lines(), Recorder("HTTP through the proxy")
    settings = SimpleNamespace(to=agent.base_url, port=0, verbose=True, keep_card=False, timeout=5.0, step=False, webhook=False, allow_host=(),
                               **dict.fromkeys(TLS_FLAGS))
    server, _, upstream = build(settings, lines, Faults([]), recorder)
    server.start()
    password, secret = "pa55word-very-secret", "bodysecret-1234567"
    try:
        asked = json.dumps({"jsonrpc": "2.0", "id": 5, "method": "SendMessage", "params": {
            "metadata": {"client_secret": secret}}}).encode()
        headers = {"Content-Type": "application/json",
                   "Authorization": "Basic " + base64.b64encode(f"alice:{password}".encode()).decode()}
        answer = HttpTransport(timeout=5).post(server.base_url + "/a2a", asked, headers)
        assert password in answer.body.decode() and secret in answer.body.decode()  # forwarded as it came
    finally:
        server.stop()
        upstream.close()
        agent.stop()
    recorder.write(str(tmp_path / "trace.jsonl"))
    trace, shown = (tmp_path / "trace.jsonl").read_text(), lines.text()
    assert "basicDecoded" in shown and "bodyRaw" in shown
    for said in (password, secret):
        assert said not in shown, shown
        assert said not in trace


def test_many_secrets_over_many_requests_never_break_the_proxy_and_plain_words_stay_plain(tmp_path):
    """Past 16 secrets held, a client's token was pushed out of the list the proxy shares with its
    printer, which then tried to add it back to a tuple: every later request was a 500. A Basic
    password or an API key that is a plain word ("application") was masked in every Content-Type
    (and so given away), and an Idempotency-Key's value in every body."""
    import base64
    agent = PeerServer(quoting, "127.0.0.1", 0, idle_timeout=2.0).start()
    lines = Lines()
    settings = SimpleNamespace(to=agent.base_url, port=0, verbose=True, keep_card=False, timeout=5.0, step=False, webhook=False, allow_host=(),
                               **dict.fromkeys(TLS_FLAGS))
    server, _, upstream = build(settings, lines, Faults([]), None)
    server.start()
    try:
        headers = {"Content-Type": "application/json", "Idempotency-Key": "order-12345", "X-API-Key": "application",
                   "Authorization": "Basic " + base64.b64encode(b"alice:application").decode()}
        for number in range(20):
            asked = json.dumps({"jsonrpc": "2.0", "id": 5, "method": "CreateTaskPushNotificationConfig", "params": {
                "taskId": "order-12345", "token": f"push-token-{number:04}"}}).encode()
            answer = HttpTransport(timeout=5).post(server.base_url + "/a2a", asked, headers)
            assert answer.status == 200, (number, answer.body[:200])
    finally:
        server.stop()
        upstream.close()
        agent.stop()
    shown = lines.text()
    assert "push-token-0019" not in shown and "alice:application" not in shown
    assert "application/json" in shown and '"taskId": "order-12345"' in shown, "plain words are not secrets"
    assert "idempotency-key: order-12345" in shown and "x-api-key: ****#" in shown, "a key names an operation"
