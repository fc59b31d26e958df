"""Load without loss: 16 clients at once over real HTTP to a served billing peer, sending
distinct orders mixed with every kind of duplicate (the same messageId again, the same
order under a new messageId, the Bearer scheme spelled in other cases). Each order is
refunded exactly once, every duplicate gets the original task, nothing fails, and the
ledger's total is what was asked. Seeded: the same interleaving of requests each run."""
import json
import random
import re
import threading

from conftest import serving
from peers import billing
from peers.a2a import wire_v10
from peers.app import PeerApp
from transports.network import HttpTransport

CLIENTS, ORDERS = 16, 64
SCHEMES = ("Bearer", "bearer", "BEARER")


def send_message(order: int, message_id: str, scheme: str) -> tuple[int, bytes, dict]:
    frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
        "messageId": message_id, "role": "ROLE_USER", "metadata": {"skillId": "process_refund"},
        "parts": [{"data": {"order_id": f"ORD-{order}", "amount": order + 0.25}}]}}}).encode()
    headers = {"Content-Type": "application/json", "A2A-Version": "1.0", "Authorization": f"{scheme} t0k"}
    return order, frame, headers


def requests(seed: int) -> list[tuple[int, bytes, dict]]:
    """Each order: its first message, that message again, and the order under a new
    messageId, each with the scheme spelled some way; all shuffled together."""
    pick = random.Random(seed)
    work = []
    for order in range(ORDERS):
        work += [send_message(order, f"m-{order}", pick.choice(SCHEMES)),
                 send_message(order, f"m-{order}", pick.choice(SCHEMES)),
                 send_message(order, f"m-{order}-again", pick.choice(SCHEMES))]
    pick.shuffle(work)
    return work


def test_sixteen_clients_with_duplicates_refund_each_order_exactly_once_over_http():
    answers: dict[int, list] = {order: [] for order in range(ORDERS)}
    failures: list[str] = []
    work = requests(seed=16)
    start = threading.Barrier(CLIENTS, timeout=10)
    with serving(None) as server:
        peer = billing.billing_agent(server.base_url)
        server.app = PeerApp(peer, wire_v10, token="t0k")

        def client(share: list) -> None:
            transport = HttpTransport(timeout=10)  # each client its own keep-alive connection
            try:
                start.wait()
                for order, frame, headers in share:
                    response = transport.post(server.base_url + "/a2a", frame, headers)
                    reply = json.loads(response.body)
                    if response.status != 200 or "result" not in reply:
                        failures.append(f"ORD-{order}: HTTP {response.status} {reply.get('error')}")
                    else:
                        answers[order].append(reply["result"]["task"])
            except Exception as exc:  # noqa: BLE001 - reported by the assertion below
                failures.append(repr(exc))
            finally:
                transport.close()

        threads = [threading.Thread(target=client, args=(work[n::CLIENTS],)) for n in range(CLIENTS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert not any(thread.is_alive() for thread in threads), "a client is stuck"

    assert failures == []
    for order, tasks in answers.items():
        assert len(tasks) == 3, order
        assert len({task["id"] for task in tasks}) == 1, f"ORD-{order}: every duplicate gets the original task"
        # A copy that arrives while the original is being worked on sees it working.
        assert {task["status"]["state"] for task in tasks} <= {"TASK_STATE_WORKING", "TASK_STATE_COMPLETED"}, tasks
        assert peer.store.tasks[tasks[0]["id"]].state.value == "completed", "and every one ended done"
    summaries = [effect.summary for effect in peer.ledger.effects.values()]
    refunded = sorted(re.fullmatch(r"refund of \$([\d,.]+) issued for ORD-(\d+) \(ref BILL-ORD-\d+\)", summary)
                      .groups() for summary in summaries)
    assert sorted(int(order) for _, order in refunded) == list(range(ORDERS)), "each order exactly once"
    assert sum(float(amount) for amount, _ in refunded) == sum(order + 0.25 for order in range(ORDERS))
    assert len(peer.store.tasks) == ORDERS, "duplicates made no tasks of their own"
