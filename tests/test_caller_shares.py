"""Per-caller shares (issue 30, items 7 and 8): one caller cannot take what the store or
push delivery keeps for every caller.

Each test plays the attacker, a token holder, over real frames on 127.0.0.1 (port 0),
bounded in time and size; where it measures honest service, as a ratio in one run.
"""
import time

from conftest import serving
from peers import billing
from peers.a2a import wire_v10
from peers.app import PeerApp
from test_resource_attacks import call, refund  # the same frames, from the same tests' attacker


def test_one_caller_filling_the_task_store_forgets_its_own_tasks_not_another_callers():
    peer = billing.billing_agent(max_tasks=60)
    with serving(PeerApp(peer, wire_v10, token="alice")) as alice, serving(PeerApp(peer, wire_v10, token="bob")) as bob:
        bobs = [call(bob.base_url, "bob", "SendMessage", refund(f"b-{n}", f"ORD-B{n}", 5))["result"]["task"]["id"]
                for n in range(5)]
        alices = [call(alice.base_url, "alice", "SendMessage", refund(f"a-{n}", f"ORD-A{n}", 5))["result"]["task"]["id"]
                  for n in range(80)]  # more than the whole store holds
        for task_id in bobs:
            assert call(bob.base_url, "bob", "GetTask", {"id": task_id})["result"]["id"] == task_id
        kept = [task_id for task_id in alices if "result" in call(alice.base_url, "alice", "GetTask", {"id": task_id})]
        assert kept == alices[-55:], "alice's own oldest made room: the store holds 60, bob's 5 among them"
        assert call(alice.base_url, "alice", "GetTask", {"id": alices[0]})["error"]["code"] == -32001


def test_a_caller_cycling_hanging_webhook_destinations_holds_only_its_share_of_delivery_threads():
    from test_resource_attacks import HangingWebhooks
    from test_push import Receiver
    from peers.push import MAX_SENDING_PER_CALLER
    peer = billing.billing_agent(allow_private_webhooks=True)
    hanging = HangingWebhooks(120)
    try:
        with serving(PeerApp(peer, wire_v10, token="attacker")) as attacker, \
                serving(PeerApp(peer, wire_v10, token="honest")) as honest, Receiver() as hook:
            most_sending = 0
            for round_number in range(3):  # 40 new destinations a round, each config deleted to stay in its share
                tasks = [call(attacker.base_url, "attacker", "SendMessage", refund(
                    f"a-{round_number}-{n}", f"ORD-A{round_number}-{n}", 5,
                    taskPushNotificationConfig={"url": hanging.urls[round_number * 40 + n]}))["result"]["task"]["id"]
                    for n in range(40)]
                with peer.webhooks.lock:
                    most_sending = max(most_sending, len(peer.webhooks.sending))
                for task_id in tasks:
                    assert call(attacker.base_url, "attacker", "DeleteTaskPushNotificationConfig",
                                {"taskId": task_id, "id": task_id})["result"] is None
            with peer.webhooks.lock:
                queued = sum(map(len, peer.webhooks.waiting.values()))
            assert most_sending <= MAX_SENDING_PER_CALLER, f"{most_sending} threads on one caller's deliveries"
            assert queued == 0, "a deleted config's deliveries not yet made are dropped with it"

            def pushed() -> bool:  # the honest caller's three pushes (submitted, working, completed)
                before = len(hook.requests)
                call(honest.base_url, "honest", "SendMessage", refund(f"h-{len(hook.requests)}-{time.monotonic()}",
                                                                       f"ORD-H{before}", 5,
                                                                       taskPushNotificationConfig={"url": hook.url}))
                return len(hook.wait_for(before + 3, seconds=3)) >= before + 3
            answered = sum(pushed() for _ in range(10))
            assert answered >= 10, f"{answered} of 10 honest tasks had all their pushes"
    finally:
        hanging.close()


def test_of_equal_holders_the_one_whose_oldest_task_came_first_makes_room_and_a_kept_task_stays(tmp_path):
    """The store counts per holder (not by walking every task on each request once full), and
    still forgets what it forgot before: the largest holder's oldest; of equal holders, the one
    whose oldest task came first; never the task a follow-up is joining (`keep`). The same for
    a durable store read back from its file."""
    from peers.a2a.model import Task
    from peers.durable import open_store
    from peers.store import TaskStore

    def fill(store):
        for number, owner in enumerate(["carol", "dave", "carol", "dave", "erin"]):
            store.add(lambda number=number: Task(f"t{number}"), owner, None)
        return store
    store = fill(TaskStore(max_tasks=5))
    store.add(lambda: Task("t5"), "erin", None)  # carol and dave hold 2 each: carol's t0 came first
    assert list(store.tasks) == ["t1", "t2", "t3", "t4", "t5"]
    with store.lock:
        store._make_room(0, new_task=True, keep="t1")  # dave holds 2 (t1 kept), carol 1, erin 2: erin's t4 goes
    assert list(store.tasks) == ["t1", "t2", "t3", "t5"]
    durable, _ = open_store(str(tmp_path / "peer.db"), max_tasks=5)
    fill(durable).flush()
    durable.file.close()  # as a peer that stopped
    again, _ = open_store(str(tmp_path / "peer.db"), max_tasks=5)
    again.add(lambda: Task("t5"), "erin", None)
    assert list(again.tasks) == ["t1", "t2", "t3", "t4", "t5"], "read back, the same order"
    again.file.close()



def tenanted_billing(server, tenants):
    """billing behind `server`, its card naming `tenants` (as `serve --tenant` does), alice's and bob's."""
    peer = billing.billing_agent(server.base_url, allow_private_webhooks=True)
    peer.card = peer.card._replace(tenants=tenants)
    server.app = PeerApp(peer, wire_v10, token="alice", other_tokens=("bob",), log=lambda line: None)
    return peer


def test_a_callers_share_of_webhooks_is_counted_across_the_tenants_it_names():
    """Counted per tenant, ten tenants let one token keep all 1,000 configs a peer holds, and
    another caller's every webhook was refused. Counted per caller, as its share of streams is."""
    import http.client
    import json
    from peers.push_limits import MAX_PER_CALLER
    tenants = tuple(f"t{n}" for n in range(10))
    with serving(None) as server:
        tenanted_billing(server, tenants)
        connection = http.client.HTTPConnection(*server.server_address[:2], timeout=5)

        def ask(token, method, params):  # one kept-alive connection: a thousand requests in a second or two
            connection.request("POST", "/a2a", json.dumps({"jsonrpc": "2.0", "id": 1, "method": method,
                                                           "params": params}),
                               {"Content-Type": "application/json", "A2A-Version": "1.0",
                                "Authorization": f"Bearer {token}"})
            return json.loads(connection.getresponse().read())
        try:
            kept = 0
            for tenant in tenants:  # ten tasks a tenant, ten webhooks each: what ten shares would hold
                for number in range(10):
                    task_id = ask("alice", "SendMessage", {"tenant": tenant, **refund(
                        f"a-{number}", f"ORD-{number}", 5)})["result"]["task"]["id"]
                    kept += sum("result" in ask("alice", "CreateTaskPushNotificationConfig", {
                        "tenant": tenant, "taskId": task_id, "id": f"c{hook}", "url": "http://127.0.0.1:9/hook"})
                        for hook in range(10))
            task_id = ask("bob", "SendMessage", {"tenant": "t0", **refund("b-1", "ORD-B1", 5)})["result"]["task"]["id"]
            answer = ask("bob", "CreateTaskPushNotificationConfig", {"tenant": "t0", "taskId": task_id,
                                                                     "url": "http://127.0.0.1:9/hook"})
        finally:
            connection.close()
        assert "result" in answer, f"bob's first webhook, once alice named ten tenants: {answer}"
        assert kept == MAX_PER_CALLER, f"alice kept {kept} webhooks across ten tenants"


def test_a_callers_share_of_delivery_threads_is_counted_across_the_tenants_it_names():
    """Sixteen tenants, a hanging webhook in each, would hold sixteen times a caller's 16 threads,
    all 256 of a peer's; counted per caller, its twentieth destination waits for one of its own."""
    from peers.push import MAX_SENDING_PER_CALLER
    from test_resource_attacks import HangingWebhooks
    tenants = tuple(f"t{n}" for n in range(20))
    hanging = HangingWebhooks(len(tenants))
    try:
        with serving(None) as server:
            peer = tenanted_billing(server, tenants)
            for tenant, url in zip(tenants, hanging.urls):
                answer = call(server.base_url, "alice", "SendMessage", {"tenant": tenant, **refund(
                    f"a-{tenant}", f"ORD-{tenant}", 5, taskPushNotificationConfig={"url": url})})
                assert "result" in answer, answer
            with peer.webhooks.lock:
                sending = len(peer.webhooks.sending)
                peer.webhooks.waiting.clear()  # measured: what still waits for the hanging ones is let go
            assert sending <= MAX_SENDING_PER_CALLER, f"{sending} threads on one caller's deliveries"
    finally:
        hanging.close()


def test_a_caller_spreading_its_tasks_over_ten_tenants_still_makes_room_from_its_own():
    """The store forgets the oldest task of the caller holding the most: counted per tenant, alice's
    60 tasks in ten tenants were ten holders of 6, and bob's 12 made the room for them."""
    tenants = tuple(f"t{n}" for n in range(10))
    with serving(None) as server:
        peer = billing.billing_agent(server.base_url, max_tasks=60)
        peer.card = peer.card._replace(tenants=tenants)
        server.app = PeerApp(peer, wire_v10, token="alice", other_tokens=("bob",), log=lambda line: None)
        bobs = [call(server.base_url, "bob", "SendMessage", {"tenant": "t0", **refund(f"b-{n}", f"ORD-B{n}", 5)})
                ["result"]["task"]["id"] for n in range(12)]
        for tenant in tenants:
            for number in range(6):
                assert "result" in call(server.base_url, "alice", "SendMessage", {"tenant": tenant, **refund(
                    f"a-{number}", f"ORD-A{number}", 5)})
        kept = [task_id for task_id in bobs
                if "result" in call(server.base_url, "bob", "GetTask", {"tenant": "t0", "id": task_id})]
        assert kept == bobs, f"{len(kept)} of bob's 12 tasks kept beside alice's 48"


def test_a_durable_store_read_back_counts_a_callers_tasks_in_every_tenant_as_one_holder(tmp_path):
    """Read back from its file, the store counts its holders as it did before it stopped (durable_read.py):
    carol's tasks in two tenants are one holder of 3, so her oldest makes room, not dave's."""
    from peers.a2a.model import Task
    from peers.durable import open_store
    from peers.tenants import in_tenant
    owners = [in_tenant("t0", "carol"), "dave", in_tenant("t1", "carol"), "dave", "carol"]
    durable, _ = open_store(str(tmp_path / "peer.db"), max_tasks=5)
    for number, owner in enumerate(owners):
        durable.add(lambda number=number: Task(f"t{number}"), owner, None)
    durable.flush()
    durable.file.close()  # as a peer that stopped
    again, _ = open_store(str(tmp_path / "peer.db"), max_tasks=5)
    again.add(lambda: Task("t5"), "erin", None)
    assert list(again.tasks) == ["t1", "t2", "t3", "t4", "t5"], "carol's oldest (tenant t0's) made the room"
    again.file.close()
