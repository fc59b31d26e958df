"""What the support agent shows of a task it follows past its answer, when the peer tells the
task whole again (a GetTask's answer, a subscription's first event, a push) or an artifact anew.
A2A 1.0: an artifactId is unique within its task; an artifact update with append replaces
nothing, one without it is the artifact as it now is. A GetTask, or a subscription, asked after
every update read answers with the task as it is now: newer than all of them, whatever it no
longer holds (a push may be older: test_hostile_pushes.py). An agent the test plays on
127.0.0.1 (http.server, port 0) answers each method as the test scripts it; our support agent
reaches it over real HTTP."""
import json

from conftest import StreamingRefundAgent, outside_peer

REFUND = {"order_id": "ORD-1", "amount": 5}


def task(state, *artifacts):
    """A 1.0 task t-1 in `state`, holding `artifacts`, each (artifactId, texts of its parts)."""
    return {"id": "t-1", "contextId": "c-1", "status": {"state": f"TASK_STATE_{state}"},
            "artifacts": [{"artifactId": made, "parts": [{"text": text} for text in texts]} for made, texts in artifacts]}


def made(artifact_id, text, append=False):
    """A 1.0 artifact update of t-1."""
    return {"artifactUpdate": {"taskId": "t-1", "contextId": "c-1", "append": append,
                               "artifact": {"artifactId": artifact_id, "parts": [{"text": text}]}}}


class Agent(StreamingRefundAgent):
    """Each method answered as the server's `answers` say: a result, or (a list) a stream of them."""

    def do_POST(self):
        frame = self.asked()
        answer = self.server.answers[frame["method"]]
        if not isinstance(answer, list):
            return self.reply({"jsonrpc": "2.0", "id": frame["id"], "result": answer})
        body = b"".join(b"data: " + json.dumps({"jsonrpc": "2.0", "id": frame["id"], "result": result}).encode()
                        + b"\n\n" for result in answer)
        self.send(200, body, "text/event-stream")


def delegated(answers, mode="wait", stream=False, patience=1.0):
    """Our support agent's delegation to the agent answering as `answers` say: its outcome."""
    import a2a_delegation as story
    from peers.support.calling.config import AllowEntry
    from peers.support.calling.follow import Following
    from transports.network import HttpTransport
    from transports.printer import FramePrinter
    with outside_peer(Agent, answers=answers, handle_error=lambda request, address: None) as base:
        http = HttpTransport(timeout=5)
        agent = story.SupportAgent(FramePrinter(http), [AllowEntry("agent", base + "/a2a")], {}, lambda *args, **facts: None,
                                   following=Following(mode, stream, patience))
        try:
            return agent.handle(base + "/.well-known/agent-card.json", "process_refund", REFUND)
        finally:
            http.close()


def texts(outcome):
    return [artifact.text for artifact in outcome.task.artifacts]


def test_a_get_task_answered_in_the_state_seen_is_shown_as_told_though_its_artifact_has_fewer_parts():
    outcome = delegated({"SendMessage": {"task": task("WORKING", ("a-1", ["draft ", "(2 of 2)"]))},
                         "GetTask": task("WORKING", ("a-1", ["final"]))}, mode="poll")
    assert outcome.error is None and outcome.task.state.value == "working", outcome.error
    assert texts(outcome) == ["final"], "the answer to the last GetTask is the task as it is now"


def test_a_subscriptions_first_event_in_the_state_seen_is_shown_as_told_though_its_artifact_has_fewer_parts():
    outcome = delegated({"SendStreamingMessage": [{"task": task("WORKING", ("a-1", ["draft ", "(2 of 2)"]))}],
                         "SubscribeToTask": [{"task": task("WORKING", ("a-1", ["final"]))},
                                             {"statusUpdate": {"taskId": "t-1", "contextId": "c-1",
                                                               "status": {"state": "TASK_STATE_COMPLETED"}}}]},
                        stream=True, patience=3.0)
    assert outcome.error is None and outcome.task.state.value == "completed", outcome.error
    assert texts(outcome) == ["final"], "a subscription's first event is the task as it is now"


def test_a_task_holding_two_artifacts_of_one_id_fails_the_delegation_in_one_line():
    outcome = delegated({"SendMessage": {"task": task("WORKING")},
                         "GetTask": task("WORKING", ("a-1", ["refund issued"]), ("a-1", [" (ref 7)"]))}, mode="poll")
    assert outcome.task is None and outcome.error is not None and "\n" not in outcome.error
    assert "artifacts[1].artifactId 'a-1'" in outcome.error and "unique within its task" in outcome.error, outcome.error


def test_an_artifact_streamed_again_without_append_replaces_the_one_of_its_id():
    outcome = delegated({"SendStreamingMessage": [{"task": task("WORKING")}, made("a-1", "refund pending"),
                                                  made("a-1", " (checking)", append=True), made("a-1", "refund issued"),
                                                  {"statusUpdate": {"taskId": "t-1", "contextId": "c-1",
                                                                    "status": {"state": "TASK_STATE_COMPLETED"}}}]},
                        stream=True, patience=3.0)
    assert outcome.error is None and texts(outcome) == ["refund issued"], (outcome.error, texts(outcome))
