"""proxy --webhook (issue 34, item 6): a push config set through the proxy has its url moved to
the proxy, each delivery is printed and can be faulted on its way to the client's receiver,
and a config read back says the client's own URL. Our own agent's --push through the proxy
to the real billing app, which pushes to 127.0.0.1 as `serve --allow-private-webhooks` does."""
import json
import re

from conftest import cli
from peers.support.proxy.webhook import Webhooks
from proxy_helpers import TOKEN, billing_served, proxy_to
from test_proxy_faults import refund
from transports.codec import loads_strict
from transports.base import HttpResponse
from transports.network import HttpTransport
from transports.server import PeerServer

HEADERS = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json", "A2A-Version": "1.0"}


def test_our_agents_pushes_cross_the_proxy_printed_and_one_delivered_twice():
    with billing_served(private_webhooks=True) as agent, \
            proxy_to(agent, "twice:3", webhook=True) as (proxy, lines):
        done = cli("--peer", proxy, "--token-env", "PROXY_TOKEN", "--push", "--allow-untrusted", "billing-agent",
                   env={"PROXY_TOKEN": TOKEN})
    said = lines.text()
    assert done.returncode == 0 and "submitted -> working -> completed" in done.stdout, done.stdout[-2000:]
    assert "[proxy] webhook moved to the proxy: http://127.0.0.1:" in said and f"-> {proxy}/webhook/1" in said
    assert len(re.findall(r"\[#[0-9]+ agent -> client\] \(push\) --> POST ", said)) == 5  # four pushes, the first one twice
    assert "[fault] twice:3: delivered request 3 to the client's receiver a second time" in said
    assert "TASK_STATE_COMPLETED" in done.stdout.split("(pushed to our webhook)")[-1]


def test_a_config_set_and_read_back_through_the_proxy_names_the_clients_url():
    with billing_served(private_webhooks=True) as agent, proxy_to(agent, webhook=True) as (proxy, lines):
        client = HttpTransport(timeout=5)
        sent = client.post(proxy + "/a2a", refund(1), HEADERS)
        task = json.loads(sent.body)["result"]["task"]["id"]
        config = {"taskId": task, "url": "http://127.0.0.1:9/receiver", "token": "t-1"}
        made = client.post(proxy + f"/a2a/tasks/{task}/pushNotificationConfigs", json.dumps(config).encode(),
                           HEADERS)
    assert made.status == 200 and json.loads(made.body)["url"] == "http://127.0.0.1:9/receiver", made.body
    assert f'"url": "{proxy}/webhook/1"' in lines.text() or f'"url":"{proxy}/webhook/1"' in lines.text()


def test_only_push_configs_urls_move_and_the_clients_bytes_stay_as_they_were_otherwise():
    webhooks = Webhooks("http://127.0.0.1:1")
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {"url": "http://x/keep"}, ' \
           b'"configuration": {"taskPushNotificationConfig": {"url": "http://127.0.0.1:9/r"}}}}'
    moved, said = webhooks.move(body, "POST", "/a2a")
    assert moved == body.replace(b"http://127.0.0.1:9/r", b"http://127.0.0.1:1/webhook/1") and len(said) == 1
    assert webhooks.receiver("/webhook/1") == "http://127.0.0.1:9/r" and webhooks.receiver("/webhook/2") is None
    for hostile in (b"[" * 5000, b'{"url": 1}', b"\xff", b'{"params": {"pushNotificationConfig": {"url": []}}}'):
        assert webhooks.move(hostile, "POST", "/a2a") == (hostile, [])


def test_a_body_the_proxy_encodes_anew_keeps_its_text_and_a_lone_surrogate_as_it_came():
    """An escaped URL ("http:\\/\\/...") cannot be swapped in place: the body is encoded anew,
    and a lone surrogate, which UTF-8 cannot hold, made that a 500 the agent never saw."""
    webhooks = Webhooks("http://127.0.0.1:1")
    body = ('{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {"metadata": {"note": '
            '"\\ud800 caf\u00e9"}}, "configuration": {"taskPushNotificationConfig": {"url": "http:\\/\\/127.0.0.1:9\\/r"}}}}')
    moved, said = webhooks.move(body.encode(), "POST", "/a2a")
    document = loads_strict(moved)
    assert document["params"]["configuration"]["taskPushNotificationConfig"]["url"] == "http://127.0.0.1:1/webhook/1"
    assert document["params"]["message"]["metadata"]["note"] == "\ud800 caf\u00e9" and len(said) == 1


def test_a_url_the_proxy_cannot_send_to_goes_on_unmoved_and_the_agent_refuses_it_as_it_would_directly():
    """file:// was moved to the proxy's receiver, which the agent took; the client was told it was set."""
    with billing_served(private_webhooks=True) as agent, proxy_to(agent, webhook=True) as (proxy, lines):
        client = HttpTransport(timeout=5)
        task = json.loads(client.post(proxy + "/a2a", refund(2), HEADERS).body)["result"]["task"]["id"]
        config = json.dumps({"taskId": task, "url": "file:///etc/passwd"}).encode()
        through, direct = (client.post(base + f"/a2a/tasks/{task}/pushNotificationConfigs", config, HEADERS)
                           for base in (proxy, agent))
    assert through.status == direct.status == 400 and through.body == direct.body, through.body
    assert "[proxy] webhook 'file:///etc/passwd': not moved (not an http(s) URL); sent on as given" in lines.text()


def test_an_agent_refusing_the_proxys_own_receiver_is_a_finding_that_says_so():
    """An agent that sends only to public addresses refuses the proxy's 127.0.0.1 receiver, and its
    error names an address the client never sent: the proxy says whose URL was refused."""
    with billing_served() as agent, proxy_to(agent, webhook=True) as (proxy, lines):
        client = HttpTransport(timeout=5)
        task = json.loads(client.post(proxy + "/a2a", refund(3), HEADERS).body)["result"]["task"]["id"]
        config = json.dumps({"taskId": task, "url": "https://hooks.example.com/a2a"}).encode()
        refused = client.post(proxy + f"/a2a/tasks/{task}/pushNotificationConfigs", config, HEADERS)
    assert refused.status == 400 and b"127.0.0.1" in refused.body
    assert f"[proxy] finding: the agent refused the webhook moved to the proxy ({proxy}/webhook/...), not the " \
           "client's own: serve the agent with --allow-private-webhooks" in lines.text()


def test_a_config_read_back_with_its_slashes_escaped_names_the_clients_url_too():
    """JSON may write "/" as "\\/" (PHP's json_encode does, by default): an agent reading a config back
    so told the client the proxy's /webhook/1, as if the client had set it, not its own receiver."""
    moved = Webhooks("http://127.0.0.1:5")
    body, _ = moved.move(b'{"jsonrpc": "2.0", "id": 1, "method": "CreateTaskPushNotificationConfig", "params": '
                         b'{"taskId": "t", "url": "http://127.0.0.1:9/hook"}}', "POST", "/a2a")
    assert b"http://127.0.0.1:5/webhook/1" in body
    read_back = moved.restore(b'{"jsonrpc": "2.0", "id": 2, "result": {"url": "http:\\/\\/127.0.0.1:5\\/webhook\\/1"}}')
    assert loads_strict(read_back)["result"]["url"] == "http://127.0.0.1:9/hook", read_back


def test_a_receiver_naming_the_proxy_itself_is_not_moved_so_no_delivery_loops_through_the_proxy():
    """A receiver at the proxy's own /webhook/1 (here by the name localhost) was moved to /webhook/1: each
    delivery there was forwarded to the proxy again, without end, until every worker waited on the next."""
    with billing_served() as agent, proxy_to(agent, webhook=True, timeout=2) as (proxy, lines):  # it never pushes itself
        itself = proxy.replace("127.0.0.1", "localhost") + "/webhook/1"
        body = json.loads(refund(4))
        body["params"]["configuration"] = {"taskPushNotificationConfig": {"url": itself}}
        client = HttpTransport(timeout=10)
        sent = client.post(proxy + "/a2a", json.dumps(body).encode(), HEADERS)
        delivered = client.post(proxy + "/webhook/1", b'{"task": {}}', {"Content-Type": "application/json"})
    said = lines.text()
    assert f"[proxy] webhook {itself}: not moved (it names this proxy itself" in said, said[-2000:]
    assert b'"error"' in sent.body and delivered.status == 404, (sent.body, delivered.status)  # each the agent's own answer
    assert len(re.findall(r"\(push\) -->", said)) == 0 and said.count("[#") == 4, said[-2000:]


def test_a_fault_on_a_deliverys_answer_acts_on_what_the_clients_receiver_said_back_and_says_so():
    """corrupt, drip and reorder on a delivery's number did nothing, and said nothing: the answer's faults
    acted on the agent's answers alone. Here the test plays the agent, delivering to the proxy's /webhook/1 (billing
    refuses a 127.0.0.1 receiver, but the config was moved on its way: requests 2 and 3 are the test's alone)."""
    receiver = PeerServer(lambda request: HttpResponse(200, {"Content-Type": "application/json"}, b'{"ok": true}'),
                          "127.0.0.1", 0, idle_timeout=2.0).start()
    try:
        with billing_served() as agent, \
                proxy_to(agent, "corrupt:2:ok", "drip:3:2000", webhook=True) as (proxy, lines):  # it never pushes itself
            client = HttpTransport(timeout=5)
            body = json.loads(refund(5))
            body["params"]["configuration"] = {"taskPushNotificationConfig": {"url": receiver.base_url + "/hook"}}
            client.post(proxy + "/a2a", json.dumps(body).encode(), HEADERS)
            corrupted, dripped = (client.post(proxy + "/webhook/1", b'{"task": {}}', {"Content-Type": "application/json"})
                                  for _ in range(2))
    finally:
        receiver.stop()
    said = lines.text()
    assert loads_strict(corrupted.body) == {"ok": "true"}, corrupted.body
    assert "[fault] corrupt:2:ok: in the answer to request 2, ok (true, a boolean) replaced by \"true\" (a string)" in said
    assert dripped.body == b'{"ok": true}' and "[fault] drip:3:2000: passing the answer to request 3 on at 2000" in said


def test_receivers_named_at_the_proxys_port_by_hosts_no_resolver_answers_for_hold_the_request_two_seconds_at_most(
        silent_resolver):
    """Whether a receiver at the proxy's own port is the proxy itself asks the resolver, which takes no deadline: a
    name it never answered for held the request (here three, in one batch) for as long as the resolver did. Each
    request waits LOOKUP_SECONDS at most for all its receivers; one not told by then is not moved, and said so."""
    import time
    from peers.support.proxy.upstream import LOOKUP_SECONDS
    with billing_served() as agent, proxy_to(agent, webhook=True) as (proxy, lines):
        port = proxy.rsplit(":", 1)[1]
        batch = []
        for n in range(3):
            body = json.loads(refund(10 + n))
            body["id"] = n + 1
            body["params"]["configuration"] = {"taskPushNotificationConfig": {
                "url": f"http://receiver-{n}.silent.test:{port}/hook"}}
            batch.append(body)
        started = time.monotonic()
        sent = HttpTransport(timeout=LOOKUP_SECONDS + 4).post(proxy + "/a2a", json.dumps(batch).encode(), HEADERS)
        took = time.monotonic() - started
    said = lines.text()
    assert took < LOOKUP_SECONDS + 1.5 and sent.status == 200, f"{took:.1f} s"
    for n in range(3):
        assert f"[proxy] webhook http://receiver-{n}.silent.test:{port}/hook: not moved (its host, at this proxy's " \
               f"port, was not resolved within {LOOKUP_SECONDS:g} s: it may name this proxy itself); sent on as given" \
               in said, said[-3000:]
    assert "webhook moved to the proxy" not in said


def test_a_receiver_not_looked_up_because_eight_lookups_were_already_waiting_is_said_so_not_as_slow(silent_resolver):
    """Past lookups.MOST_WAITING lookups waiting on the resolver, a receiver's host is not looked up at all: its
    line said it "was not resolved within 2 s", true, but the resolver was never asked, and the request never waited."""
    import time
    from conftest import free_port
    from transports import lookups
    silent_resolver.fill()
    with billing_served() as agent, proxy_to(agent, webhook=True) as (proxy, lines):
        port = proxy.rsplit(":", 1)[1]
        body = json.loads(refund(20))
        body["params"]["configuration"] = {"taskPushNotificationConfig": {
            "url": f"http://receiver.silent.test:{port}/hook"}}
        started = time.monotonic()
        sent = HttpTransport(timeout=5).post(proxy + "/a2a", json.dumps(body).encode(), HEADERS)
        took = time.monotonic() - started
    free = free_port()
    with proxy_to(f"http://agent.silent.test:{free}", port=free) as (_, at_start):
        to_said = at_start.text()
    said = lines.text()
    assert sent.status == 200 and took < 1.5, f"{took:.1f} s"
    assert f"[proxy] webhook http://receiver.silent.test:{port}/hook: not moved (its host, at this proxy's port, was " \
           f"not looked up, as {lookups.MOST_WAITING} lookups were already waiting on the resolver: it may name this proxy " \
           "itself); sent on as given" in said, said[-3000:]
    assert f"[proxy] --to http://agent.silent.test:{free}: its host, at this proxy's port, was not looked up, as " \
           f"{lookups.MOST_WAITING} lookups were already waiting on the resolver: it may name this proxy itself" in to_said


def test_a_batch_of_receivers_no_resolver_answers_for_holds_one_place_among_the_lookups_not_all_eight(silent_resolver):
    """Once a request's LOOKUP_SECONDS were spent on its first receiver, each next one was still handed to the
    resolver, with no time left to wait for it: a batch of ten held all eight places, so every other request's
    receivers went unlooked-up for as long as the resolver kept silent. A lookup past its deadline is not started."""
    import threading
    with billing_served() as agent, proxy_to(agent, webhook=True) as (proxy, lines):
        port = proxy.rsplit(":", 1)[1]
        body = json.loads(refund(30))
        batch = [{**body, "id": n, "params": {**body["params"], "configuration": {"taskPushNotificationConfig": {
            "url": f"http://receiver-{n}.silent.test:{port}/hook"}}}} for n in range(10)]
        sent = HttpTransport(timeout=8).post(proxy + "/a2a", json.dumps(batch).encode(), HEADERS)
        waiting = [each for each in threading.enumerate() if each.name == "lookup"]
    assert sent.status == 200 and len(waiting) == 1, (len(waiting), lines.text()[-2000:])
    assert "not looked up" not in lines.text()


def test_a_delivery_the_proxy_relays_has_frame_numbers_of_its_own_apart_from_the_clients_exchanges():
    """The proxy prints a delivery with a printer of its own, beside the one of its clients' exchanges, and a live
    page shows both and draws them by number (web/proxying.py): each counted from 1, a page's #1 and #2 were two
    frames each, and a step of the diagram showed the other."""
    import time
    delivered = []
    receiver = PeerServer(lambda request: delivered.append(request.body) or HttpResponse(200, {}, b""), "127.0.0.1", 0,
                          idle_timeout=2.0).start()
    try:
        with billing_served(private_webhooks=True) as agent, proxy_to(agent, webhook=True) as (proxy, lines):
            asked = json.loads(refund(1))
            asked["params"]["configuration"] = {"taskPushNotificationConfig": {"url": receiver.base_url + "/r"}}
            assert HttpTransport(timeout=5).post(proxy + "/a2a", json.dumps(asked).encode(), HEADERS).status == 200
            deadline = time.monotonic() + 10
            while not delivered and time.monotonic() < deadline:  # billing pushes once its answer has gone
                time.sleep(0.02)
            seqs = [frame.seq for each in (lines.app.printer, lines.app.pushes) for frame in each.frames]
    finally:
        receiver.stop()
    assert delivered and len(lines.app.pushes.frames) >= 2, "a delivery crossed the proxy"
    assert len(seqs) == len(set(seqs)), sorted(seqs)
