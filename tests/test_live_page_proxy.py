"""A proxy session started from the live page (peers/support/web/proxying.py), over plain HTTP:
a request sent through the proxy's URL shows in the session's event stream as frames from
both sides, its annotation and a fault's line, as they happen; Stop ends it. The agent is a
small one on 127.0.0.1 whose error answers a wrong id (a rule the proxy annotates)."""
import json
import urllib.error
import urllib.request

from transports.base import HttpResponse
from transports.server import PeerServer
import test_live_page_server as server_tests
from test_live_page_server import ask, events_of

page = server_tests.page  # the page's server, as a fixture
PAYLOAD = "<img src=x onerror=document.body.dataset.pwned=1><script>document.body.dataset.pwned=1</script>"
ASKED = b'{"jsonrpc": "2.0", "id": 5, "method": "GetTask", "params": {"id": "t"}}'


def agent_app(request):
    """A card named with markup; every JSON-RPC answer an error with a wrong id, markup in it."""
    if request.method == "GET":
        return HttpResponse(200, {"Content-Type": "application/json"}, json.dumps({"name": PAYLOAD}).encode())
    error = {"jsonrpc": "2.0", "id": PAYLOAD, "error": {"code": -32001, "message": PAYLOAD}}
    return HttpResponse(200, {"Content-Type": "application/json"}, json.dumps(error).encode())


def started_proxy(page, to, faults=""):
    status, _, body = ask(page, "/proxy", "POST", {"to": to, "faults": faults})
    assert status == 201, body
    return json.loads(body)


def through(url, body=None):
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json", "X-Note": PAYLOAD})
    try:
        with urllib.request.urlopen(request, timeout=5) as answer:
            return answer.status
    except urllib.error.HTTPError as error:
        return error.code


def test_a_proxied_exchange_appears_live_with_both_sides_its_annotation_and_a_fault(page):
    agent = PeerServer(agent_app, "127.0.0.1", 0, idle_timeout=2.0).start()
    try:
        session = started_proxy(page, agent.base_url, "status:3:503")
        assert session["command"] == f"python3 a2a_delegation.py proxy --to {agent.base_url} --fault status:3:503"
        assert session["proxy"].startswith("http://127.0.0.1:") and session["proxy"] != agent.base_url
        assert through(session["proxy"] + "/.well-known/agent-card.json") == 200
        assert through(session["proxy"] + "/a2a", ASKED) == 200  # the agent's wrong id: annotated
        seen = events_of(page, session["id"], until=lambda event: event.get("text", "").startswith("    ! "))
        frames = [event for event in seen if event["type"] == "frame"]
        assert [(frame["direction"], frame["method"]) for frame in frames] == [
            ("-->", "GET"), ("<--", "GET"), ("-->", "POST"), ("<--", "POST")], "both sides, as they crossed"
        lines = [event["text"] for event in seen if event["type"] == "line"]
        assert any(line.startswith("[#2 client -> agent] --> ") and "GetTask" in line for line in lines)
        assert any(line.startswith("[#2 agent -> client] <-- ") for line in lines)
        assert lines[-1].startswith("    ! JSONRPC-ERR-001 MUST"), lines[-1]
        assert through(session["proxy"] + "/a2a", ASKED) == 503  # request 3: the fault answers, not the agent
        seen = events_of(page, session["id"], until=lambda event: event.get("text", "").startswith("[fault]"))
        assert seen[-1]["text"].startswith("[fault] status:3:503: answered request 3 (POST /a2a) with 503")
        # A diagram is drawn at most a tenth of the page's time, so it may come a moment after the line (runs.py)
        drawn = [event["svg"] for event in events_of(page, session["id"], until=lambda event: event["type"] == "diagram")
                 if event["type"] == "diagram"]
        assert drawn, "the diagram drawn as for any run"
        assert ">client<" in drawn[-1] and not any(f">{lane}<" in drawn[-1] for lane in (
            "support agent", "registry", "trust gate")), "a client and the agent: none of our agent's lanes"
        assert ask(page, f"/runs/{session['id']}/stop", "POST")[0] == 200
        assert events_of(page, session["id"])[-1] == {"type": "end", "status": 0}
        records = [json.loads(line) for line in ask(page, f"/runs/{session['id']}/trace.jsonl")[2].splitlines()]
        assert [record["direction"] for record in records if record["kind"] == "frame"] == ["-->", "<--"] * 2, \
            "its trace, as --trace keeps it (the faulted request never reached the agent)"
        try:
            through(session["proxy"] + "/.well-known/agent-card.json")
            assert False, "the proxy still answers after Stop"
        except urllib.error.URLError:
            pass
    finally:
        agent.stop()


def test_a_session_that_cannot_be_is_refused_in_one_line_and_needs_the_token(page):
    for asked, said in (({"to": "file:///etc/passwd"}, "http(s) URL, its origin"),
                        ({"to": "http://127.0.0.1:9/a2a"}, "give the agent's origin (http://127.0.0.1:9)"),
                        ({"to": "http://127.0.0.1:9", "faults": "explode:1"}, "--fault 'explode:1'"),
                        ({"to": "http://127.0.0.1:9", "faults": "status:1:503 status:1:500"}, "both act on request 1"),
                        ({"to": "http://127.0.0.1:9", "seed": "7"}, "whole number")):
        status, _, body = ask(page, "/proxy", "POST", asked)
        assert status == 400 and said in json.loads(body)["error"], body
    assert ask(page, "/proxy", "POST", {"to": "http://127.0.0.1:9"}, token=False)[0] == 401
    assert ask(page, "/proxy", "POST", {"to": "http://127.0.0.1:9"}, origin=False)[0] == 403
