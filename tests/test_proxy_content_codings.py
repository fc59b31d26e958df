"""The proxy prints frames, not compressed bytes: a client that accepts gzip (httpx, which the
Python SDK uses, says `Accept-Encoding: gzip, deflate`) in front of an agent that compresses
when asked (Starlette's GZipMiddleware, from 500 bytes) made the proxy print the gzip bytes as
the frame and judge a JSON answer "not JSON". The agent here is a test double on 127.0.0.1."""
import gzip
import json

from proxy_helpers import proxy_to
from transports.base import ClientRequest, HttpResponse
from transports.network import HttpTransport
from transports.server import PeerServer

ANSWER = json.dumps({"jsonrpc": "2.0", "id": 3, "result": {"id": "task-1", "note": "x" * 600}}).encode()
ASK = b'{"jsonrpc": "2.0", "id": 3, "method": "GetTask", "params": {"id": "task-1"}}'


def compressing(request):
    """An agent answering in gzip whenever the request's Accept-Encoding names it."""
    if "gzip" in (request.header("accept-encoding") or ""):
        return HttpResponse(200, {"Content-Type": "application/json", "Content-Encoding": "gzip", "Vary": "Accept-Encoding"},
                            gzip.compress(ANSWER, mtime=0))
    return HttpResponse(200, {"Content-Type": "application/json"}, ANSWER)


def test_a_client_accepting_gzip_sees_the_proxy_print_the_agents_json_and_gets_a_body_it_reads():
    server = PeerServer(compressing, "127.0.0.1", 0, idle_timeout=2.0).start()
    try:
        with proxy_to(server.base_url) as (proxy, lines):
            got = HttpTransport(timeout=5).exchange(ClientRequest(
                "POST", proxy + "/a2a", {"Content-Type": "application/json", "Accept-Encoding": "gzip, deflate"}, ASK))
    finally:
        server.stop()
    said = lines.text()
    assert f"[#1 agent -> client] <-- {ANSWER.decode()}" in said, said
    assert "! JSONRPC-FMT-002" not in said, said
    coding = (got.header("Content-Encoding") or "identity").lower()
    assert got.status == 200 and (gzip.decompress(got.body) if coding == "gzip" else got.body) == ANSWER


def always_compressing(request):
    """An agent that compresses whenever a client names no encoding: RFC 9110 12.5.3 lets it (curl's case)."""
    if request.header("accept-encoding") is None:
        return HttpResponse(200, {"Content-Type": "application/json", "Content-Encoding": "gzip"}, gzip.compress(ANSWER, mtime=0))
    return HttpResponse(200, {"Content-Type": "application/json"}, ANSWER)


def test_an_answer_compressed_for_a_client_naming_no_encoding_is_passed_on_and_said_not_judged():
    server = PeerServer(always_compressing, "127.0.0.1", 0, idle_timeout=2.0).start()
    try:
        with proxy_to(server.base_url) as (proxy, lines):
            got = HttpTransport(timeout=5).exchange(ClientRequest("POST", proxy + "/a2a", {"Content-Type": "application/json"}, ASK))
    finally:
        server.stop()
    said = lines.text()
    assert gzip.decompress(got.body) == ANSWER, "passed on as the agent sent it"
    assert "! JSONRPC-FMT-002" not in said, said
    assert "(its body not judged: the agent compressed this answer, Content-Encoding gzip, so its bytes" in said, said


def compressing_wrongly(request):
    """An agent that compresses for a client naming no encoding, under a Content-Type no binding answers with:
    a JSON-RPC answer as text/html, an HTTP+JSON operation's 404 as text/plain."""
    status, kind = (200, "text/html") if request.url.endswith("/a2a") else (404, "text/plain")
    return HttpResponse(status, {"Content-Type": kind, "Content-Encoding": "gzip"}, gzip.compress(ANSWER, mtime=0))


def test_a_compressed_answer_is_still_judged_by_the_rules_that_read_only_its_status_and_headers():
    """Its bytes are not the JSON they carry, so the rules that read the body cannot judge it; those that read
    only the status line and headers can, and did not: an agent answering JSON-RPC as text/html was told nothing."""
    server = PeerServer(compressing_wrongly, "127.0.0.1", 0, idle_timeout=2.0).start()
    try:
        with proxy_to(server.base_url) as (proxy, lines):
            http = HttpTransport(timeout=5)
            rpc = http.exchange(ClientRequest("POST", proxy + "/a2a", {"Content-Type": "application/json"}, ASK))
            rest = http.exchange(ClientRequest("GET", proxy + "/tasks/task-1", {}, b""))
    finally:
        server.stop()
    said = lines.text()
    assert rpc.status == 200 and rest.status == 404 and gzip.decompress(rest.body) == ANSWER
    assert "! JSONRPC-FMT-002 MUST [9.1] JSON-RPC answers are Content-Type application/json: Content-Type is " \
           "text/html" in said, said
    assert "! HTTP_JSON-SVC-001 SHOULD [11.1]" in said and "Content-Type is text/plain" in said, said
    assert "HTTP_JSON-ERR-001" not in said and "is not JSON" not in said, "a body not read is not judged: " + said
    assert said.count("(its body not judged: the agent compressed this answer, Content-Encoding gzip") == 2, said
