"""A stream's artifact updates are folded into its task on our side in time linear in their number: a 1 MiB stream
holds some 8,000 of them, and a scan of the artifacts told so far (and a new task) per update took seconds of CPU.
Real frames: a peer answering the streaming send with a seeded stream, read by the support agent in process."""
import json
import random
import time

from conftest import BILLING, BILLING_CARD, support_agent
from peers import billing
from peers.a2a import wire_v10
from transports.base import HttpResponse

CARD = json.dumps(wire_v10.card_to_wire(billing.billing_agent().card)).encode()


WORKING = {"statusUpdate": {"taskId": "t-1", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}}}


def seeded_updates(count, seed=7, between=()):
    """`count` artifact updates, nearly all of artifacts not told before; a few add a chunk to one told (append), a
    few tell one anew; with what folding them must give: each artifact once, where it was first told, as last told.
    `between`: the updates sent after each (a status in the state the task is in changes no artifact)."""
    rng, updates, expected = random.Random(seed), [], {}
    for number in range(count):
        told, roll = list(expected), rng.random()
        name = rng.choice(told) if told and roll < 0.1 else f"a-{number}"
        append = roll < 0.05
        part = {"text": f"p{number}"}
        updates.extend([{"artifactUpdate": {"taskId": "t-1", "contextId": "c", "append": append,
                                            "artifact": {"artifactId": name, "parts": [part]}}}, *between])
        expected[name] = expected[name] + [part["text"]] if append and name in expected else [part["text"]]
    return updates, [(name, "".join(texts)) for name, texts in expected.items()]


def folded_in(count, between=()):
    """The artifacts the support agent folded from a stream of `count` seeded updates, and the CPU it took."""
    updates, expected = seeded_updates(count, between=between)

    def app(request):
        if request.method == "GET":
            return HttpResponse(200, {"Content-Type": "application/json"}, CARD)
        asked = json.loads(request.body)["id"]
        results = [{"task": {"id": "t-1", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}}}, *updates,
                   {"statusUpdate": {"taskId": "t-1", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}}}]
        body = b"".join(b"data: " + json.dumps({"jsonrpc": "2.0", "id": asked, "result": result},
                                               separators=(",", ":")).encode() + b"\n\n" for result in results)
        return HttpResponse(200, {"Content-Type": "text/event-stream"}, body)
    agent, _, _ = support_agent([BILLING], apps={billing.BASE_URL: app}, stream=True, patience=60.0)
    started = time.process_time()
    outcome = agent.handle(BILLING_CARD, "process_refund", {"order_id": "ORD-1", "amount": 5})
    took = time.process_time() - started
    assert [(artifact.artifact_id, artifact.text) for artifact in outcome.task.artifacts] == expected
    return took


def test_eight_thousand_artifact_updates_fold_in_well_under_a_second_and_four_times_as_many_take_about_four_times_as_long():
    folded_in(200)  # the modules a stream loads are loaded before anything is timed
    quarter, whole = min(folded_in(2000) for _ in range(2)), min(folded_in(8000) for _ in range(2))
    assert whole < 1.5, f"8,000 artifact updates took {whole:.2f} s of CPU"
    assert whole < 8 * quarter + 0.1, f"4 times the updates took {whole / quarter:.1f} times as long: not linear"


AGAIN = {"task": {"id": "t-1", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}}}  # as it was: no artifact


def test_artifact_updates_each_followed_by_a_status_and_the_task_again_fold_in_time_linear_in_their_number():
    """A status update or a whole task between artifact updates made the artifacts told into the task's tuple, and the
    next artifact update indexed them all again: a peer saying "working" after each took 2 s of CPU for 4,000 (the
    scan it replaced took a quarter of that), and the task resent as it began, each artifact compared with all told.
    A status changes no artifact, and a task resent is compared artifact by artifact with those it tells alone."""
    folded_in(100, [WORKING, AGAIN])
    quarter, whole = folded_in(500, [WORKING, AGAIN]), min(folded_in(2000, [WORKING, AGAIN]) for _ in range(2))
    assert whole < 8 * quarter + 0.1, f"4 times the updates took {whole / quarter:.1f} times as long: not linear"
