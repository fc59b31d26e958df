"""proxy --to URL (issue 34, items 1 to 3): our own agent through the proxy to a served billing
peer prints the frames of a direct run, both bindings and a stream; each side receives the
bytes it would without the proxy; the card names the proxy and the rewrite is said once; a
signed card is said to break; --trace writes a trace that --replay reads. Real frames on
127.0.0.1, port 0."""
import json
import re

from conftest import cli
from proxy_helpers import TOKEN, billing_served, proxy_to
from transports.network import HttpTransport

RANDOM = re.compile(r"task-[0-9a-f]{24}|\d{4}-\d\d-\d\dT[0-9:.]+Z|127\.0\.0\.1:\d+")
CARD = "/.well-known/agent-card.json"
FILES = __import__("pathlib").Path(__import__("tempfile").mkdtemp())  # each run's registry and credentials


def normal(text):
    return RANDOM.sub("<varies>", text)


def run_agent(base, *flags):
    """Our agent with billing at `base` its one peer, as the README points it at a served one."""
    files = FILES / base.rsplit(":", 1)[1]
    files.mkdir(exist_ok=True)
    (files / "registry.json").write_text(json.dumps({"peers": [{"cardUrl": base + CARD}]}))
    (files / "credentials.json").write_text(json.dumps({"tokens": {base + "/a2a": TOKEN}}))
    done = cli("--transport", "http", "--registry", str(files / "registry.json"), "--credentials",
               str(files / "credentials.json"), "--allow-untrusted", "billing-agent", "--frames", "summary", *flags)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_our_agent_prints_the_same_frames_through_the_proxy_on_both_bindings_and_streamed():
    said = ""
    for flags in ((), ("--binding", "http+json"), ("--stream",), ("--stream", "--binding", "http+json")):
        # A billing of its own each side, each run: the same refund asked again is the task that did it, one event
        with billing_served() as agent, billing_served() as behind, proxy_to(behind) as (proxy, lines):
            direct, proxied = run_agent(agent, *flags), run_agent(proxy, *flags)
            said += lines.text()
        assert normal(proxied) == normal(direct), flags
        assert "<-- [4]" in proxied if "--stream" in flags else "TASK_STATE_COMPLETED" in proxied
    assert said.count("[#2 client -> agent] --> POST /a2a/message:stream") == 1  # the card, then the stream
    assert said.count("[#2 agent -> client] <-- [4] ") == 2  # each event its own frame line, on both bindings
    assert said.count("the card, as served through the proxy") == 4  # the rewrite, said once a proxy
    assert "! " not in said  # billing breaks no single-frame rule


def exchange(base, seen):
    """The same four requests, each side's bytes kept: what the client got, and what the agent was handed."""
    client = HttpTransport(timeout=5)
    auth = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json", "X-Trace-Me": "1"}
    frame = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "SendMessage", "params": {"message": {
        "messageId": "m-1", "role": "ROLE_USER", "parts": [{"data": {"order_id": "ORD-3300", "amount": 180.0},
                                                            "mediaType": "application/json"}],
        "metadata": {"skillId": "process_refund"}}}}).encode()
    got = [client.post(base + "/a2a", frame, {**auth, "A2A-Version": "1.0"}),
           client.post(base + "/a2a", b'{"jsonrpc": "2.0", "id": 8, "method": "GetTask", "params": {"id": "no-such"}}',
                       {**auth, "A2A-Version": "1.0"}),
           client.exchange(__import__("transports.base", fromlist=["ClientRequest"]).ClientRequest(
               "DELETE", base + "/a2a/tasks/no-such/pushNotificationConfigs/x",
               {"Authorization": f"Bearer {TOKEN}", "A2A-Version": "1.0"})),
           client.stream(base + "/a2a", frame.replace(b'"SendMessage"', b'"SendStreamingMessage"'),
                         {**auth, "A2A-Version": "1.0", "Accept": "text/event-stream"})]
    bodies = [answer.body if isinstance(answer.body, bytes) else b"".join(answer.body) for answer in got]
    client.close()
    drop = {"host", "date"}
    handed = [(r.method, r.url.split("/", 3)[3], {k: v for k, v in r.headers.items() if k not in drop}, r.body)
              for r in seen]
    answers = [(a.status, {k.lower(): v for k, v in a.headers.items() if k.lower() not in drop}, normal(b.decode()))
               for a, b in zip(got, bodies)]
    return answers, handed


def test_each_side_receives_the_same_bytes_with_and_without_the_proxy():
    seen_direct, seen_proxied = [], []
    with billing_served(seen=seen_direct) as agent:
        direct = exchange(agent, seen_direct)
    with billing_served(seen=seen_proxied) as agent, proxy_to(agent) as (proxy, lines):
        proxied = exchange(proxy, seen_proxied)
    via = {"via": f"1.1 {lines.app.pseudonym}"}  # the one header the proxy adds, either way [RFC 9110 7.6.3]
    # the agent was handed the same verbs, paths, headers and bodies; the client got the same statuses, headers
    # and bodies (a stream's too)
    assert proxied[1] == [(verb, path, {**headers, **via}, body) for verb, path, headers, body in direct[1]]
    assert proxied[0] == [(status, {**headers, **via}, body) for status, headers, body in direct[0]]
    assert [status for status, _, _ in direct[0]] == [200, 200, 404, 200]


def test_the_card_through_the_proxy_names_the_proxy_and_the_rest_is_the_agents_bytes():
    with billing_served() as agent, proxy_to(agent) as (proxy, lines):
        client = HttpTransport(timeout=5)
        original, moved = client.get(agent + CARD, {}).body, client.get(proxy + CARD, {}).body
        moved_again = client.get(proxy + CARD, {}).body
        client.close()
    assert moved == moved_again and moved == original.replace(agent.encode(), proxy.encode())
    assert [entry["url"] for entry in json.loads(moved)["supportedInterfaces"]] == [proxy + "/a2a"] * 3
    said = lines.text()
    assert said.count(f"  - supportedInterfaces[0].url: {agent}/a2a\n  + supportedInterfaces[0].url: {proxy}/a2a") == 1


def test_a_signed_card_is_said_to_break_and_keep_card_serves_it_unchanged():
    from peers.signing import rs256
    from conftest import ROOT
    key = rs256.private_from_pem((ROOT / "peers/keys/billing-agent.DEMO-KEY.pem").read_text())
    with billing_served(signing_key=key) as agent:
        original = HttpTransport(timeout=5).get(agent + CARD, {}).body
        for keep in (False, True):
            with proxy_to(agent, keep_card=keep) as (proxy, lines):
                served = HttpTransport(timeout=5).get(proxy + CARD, {}).body
            assert (served == original) is keep
            assert lines.text().count("the card is signed: rewriting its interfaces breaks its signature") == 1


def test_a_proxied_session_traced_is_replayed_and_drawn(tmp_path):
    import subprocess
    import sys
    from conftest import ROOT
    trace = tmp_path / "proxied.jsonl"
    with billing_served() as agent:
        proxy = subprocess.Popen([sys.executable, str(ROOT / "a2a_delegation.py"), "proxy", "--to", agent,
                                  "--trace", str(trace)], stdout=subprocess.PIPE, text=True)
        try:
            first = proxy.stdout.readline()
            base = re.search(r"listening on (\S+),", first)[1]
            run_agent(base)
        finally:
            proxy.terminate()
            said = proxy.communicate(timeout=10)[0]
    assert "[#1 agent -> client] <-- " in said and proxy.returncode == 0
    replayed = cli("--replay", str(trace), "--diagram", str(tmp_path / "proxied.svg"))
    assert replayed.returncode == 0 and "[#1 client -> agent] --> " in replayed.stdout
    drawn = (tmp_path / "proxied.svg").read_text()
    assert "SendMessage" in drawn and ">client<" in drawn, "a client's frames to the agent"
    assert ">trust gate<" not in drawn and ">registry<" not in drawn, "not our agent's: no registry or gate drawn"


def test_the_readmes_proxy_commands_work_as_printed(tmp_path):
    """The README's three commands (a served billing, the proxy dropping the refund's answer, our
    agent through it), ports made free: the agent says retrying is not safe; the proxy says why."""
    import subprocess
    import sys
    from conftest import ROOT, Child, free_port
    readme = (ROOT / "README.md").read_text()
    serve = next(line for line in readme.splitlines() if "--port 8006" in line and " serve " in line)
    proxy = next(line for line in readme.splitlines() if line.startswith("python3 a2a_delegation.py proxy"))
    agent = next(line for line in readme.splitlines() if "--peer http://127.0.0.1:8007" in line)
    ports = {"8006": str(free_port()), "8007": str(free_port())}
    for printed, free in ports.items():
        serve, proxy, agent = (command.replace(printed, free) for command in (serve, proxy, agent))
    children = [Child(["bash", "-c", "exec " + serve], cwd=ROOT), Child(["bash", "-c", "exec " + proxy], cwd=ROOT)]
    try:
        children[0].until("Ctrl-C")
        children[1].until("Ctrl-C")
        done = subprocess.run(["bash", "-c", agent], cwd=ROOT, capture_output=True, text=True, timeout=30)
    finally:
        said = [child.stop()[0] for child in children][1]
    assert done.returncode == 1 and "retry is NOT safe" in done.stderr, done.stderr
    assert "[fault] drop-response:2: the agent answered request 2 (200)" in said and sys.executable


def test_a_card_spelling_its_urls_otherwise_is_still_moved_to_the_proxy():
    from peers.support.proxy.card import rewrite
    body = b'{"name": "x", "supportedInterfaces": [{"url": "http:\\/\\/127.0.0.1:1\\/a2a"}], "url": "http://127.0.0.1:1/a2a",' \
           b' "additionalInterfaces": [{"url": "http://elsewhere.example/a2a"}]}'
    moved = rewrite(body, "http://127.0.0.1:1", "http://127.0.0.1:2")
    card = json.loads(moved.body)
    assert card["supportedInterfaces"][0]["url"] == card["url"] == "http://127.0.0.1:2/a2a"
    assert card["additionalInterfaces"][0]["url"] == "http://elsewhere.example/a2a"
    assert moved.elsewhere == ["additionalInterfaces[0].url: http://elsewhere.example/a2a"]


def test_hop_by_hop_headers_stop_at_the_proxy_and_the_rest_go_on():
    seen = []
    with billing_served(seen=seen) as agent, proxy_to(agent) as (proxy, _):
        HttpTransport(timeout=5).get(proxy + CARD, {"Connection": "X-Hop-Only", "X-Hop-Only": "1", "Keep-Alive": "5",
                                                    "TE": "trailers", "Upgrade": "h2c", "X-End-To-End": "2"})
    handed = seen[0].headers
    assert handed.get("x-end-to-end") == "2"
    assert not {"connection", "x-hop-only", "keep-alive", "te", "upgrade"} & set(handed)


def test_to_takes_an_origin_and_a_path_or_query_is_refused_in_one_line_not_dropped():
    """Each request goes on with its own path and query, so --to names only where: a URL with a
    path or a query would seem to be forwarded there and is not (it was once dropped unsaid)."""
    for url in ("http://127.0.0.1:9/agents/billing", "http://127.0.0.1:9/?tenant=a", "http://127.0.0.1:9/a2a#x"):
        done = cli("proxy", "--to", url)
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert "names a path or query: give the agent's origin (http://127.0.0.1:9)" in done.stderr, done.stderr


def test_two_set_cookie_headers_reach_the_client_as_two_not_joined_by_a_comma():
    """Repeated fields were joined with ", ": two cookies (an Expires holds a comma, and a load
    balancer's sticky session sets two) reached the client as one Set-Cookie it reads wrongly."""
    import socket
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    cookies = ["AWSALB=abc; Expires=Wed, 09 Jun 2027 10:18:14 GMT; Path=/", "AWSALBCORS=abc; Path=/; Secure"]

    class Agent(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            self.send_response(200)
            for cookie in cookies:
                self.send_header("Set-Cookie", cookie)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args):
            pass
    agent = ThreadingHTTPServer(("127.0.0.1", 0), Agent)
    agent.daemon_threads = True
    threading.Thread(target=agent.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        with proxy_to(f"http://127.0.0.1:{agent.server_address[1]}") as (proxy, _):
            host, port = proxy.split("//")[1].split(":")
            with socket.create_connection((host, int(port)), timeout=5) as sock:
                sock.sendall(f"GET /x HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n".encode())
                answer = b""
                while chunk := sock.recv(65536):
                    answer += chunk
    finally:
        agent.shutdown()
        agent.server_close()
    head = answer.split(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")
    assert [line.split(": ", 1)[1] for line in head if line.lower().startswith("set-cookie:")] == cookies


def test_a_proxy_told_to_forward_to_itself_says_so_and_does_not_start():
    """--to naming the proxy's own port forwarded one request to itself 68 to 128 times, every
    worker taken, until --timeout: nobody else was answered meanwhile."""
    import subprocess
    import sys
    from conftest import ROOT, free_port
    port = free_port()
    for host in ("127.0.0.1", "localhost", "0", "2130706433", "[::ffff:127.0.0.1]", "127.1"):  # any spelling
        done = subprocess.run([sys.executable, str(ROOT / "a2a_delegation.py"), "proxy", "--to", f"http://{host}:{port}",
                               "--port", str(port)], capture_output=True, text=True, timeout=30)
        assert done.returncode == 2 and done.stderr.count("\n") == 1
        assert f"--to http://{host}:{port} is this proxy itself" in done.stderr


def test_an_agent_on_another_loopback_address_at_the_proxys_port_is_not_the_proxy():
    """The proxy listens on 127.0.0.1 alone: an agent on [::1] (Node's localhost) or 127.0.0.2 at the same port is another."""
    from peers.support.proxy.upstream import leads_back as _is_itself
    assert _is_itself("http://127.0.0.1:8001", 8001) and _is_itself("http://0:8001", 8001)
    assert not _is_itself("http://[::1]:8001", 8001) and not _is_itself("http://127.0.0.2:8001", 8001)
    assert not _is_itself("http://127.0.0.1:8002", 8001)


def test_a_to_at_the_proxys_port_whose_host_no_resolver_answers_for_in_time_is_said_at_start(silent_resolver):
    """Whether --to names the proxy itself waits on the resolver LOOKUP_SECONDS at most (upstream.leads_back):
    a host not told by then may be the proxy, whose every request would come back to it without end. The
    proxy started without a word, as if the host were known to be another."""
    import time
    from conftest import free_port
    from peers.support.proxy.upstream import LOOKUP_SECONDS
    port = free_port()
    started = time.monotonic()
    with proxy_to(f"http://agent.silent.test:{port}", port=port) as (_, lines):
        took = time.monotonic() - started
        said = lines.text()
    assert took < LOOKUP_SECONDS + 1.5, f"{took:.1f} s"
    assert f"[proxy] --to http://agent.silent.test:{port}: its host, at this proxy's port, was not resolved within " \
           f"{LOOKUP_SECONDS:g} s: it may name this proxy itself, which would forward every request to itself" in said, said
