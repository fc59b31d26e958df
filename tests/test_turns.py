"""A task across turns (A2A: a message carrying taskId continues that task). A follow-up to
an unknown or another caller's task is -32001, to a finished one -32004, with a contextId
not the task's -32602; a paused task continues only with what it waits for (billing: an
approval of exactly the refund it proposed), once; every turn stays in its history.
Real frames through the real billing app, in process and over HTTP on 127.0.0.1."""
import json
import threading

import pytest

from conftest import HEADERS, Client, cli_once, cli_together
from peers.a2a import wire_v03
from transports.network import HttpTransport

BIG = 6000.0  # over billing's approval limit: the task pauses for a person
PROPOSAL = {"order_id": "ORD-9", "amount": BIG, "currency": "USD"}


def paused(client: Client, message_id="m-1") -> dict:
    task = client.send(message_id, {"order_id": "ORD-9", "amount": BIG})["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", task
    assert json.dumps({"approval": PROPOSAL}) in task["status"]["message"]["parts"][0]["text"]
    return task


def test_a_follow_up_to_an_unknown_task_is_task_not_found(client):
    error = client.send("m-1", {"approval": PROPOSAL}, taskId="task-404")["error"]
    assert error["code"] == -32001 and "task-404" in error["message"]


def test_a_follow_up_to_a_finished_task_is_unsupported_and_makes_no_task(client):
    done = client.send("m-1", {"order_id": "ORD-1", "amount": 5})["result"]["task"]
    error = client.send("m-2", {"order_id": "ORD-2", "amount": 5}, taskId=done["id"])["error"]
    assert error["code"] == -32004 and "completed" in error["message"]
    assert len(client.call("ListTasks", {})["result"]["tasks"]) == 1
    assert client.refunds() == ["refund of $5.00 issued for ORD-1 (ref BILL-ORD-1)"]


def test_a_follow_up_whose_context_is_not_the_tasks_is_invalid_params_naming_both(client):
    task = paused(client)
    error = client.send("m-2", {"approval": PROPOSAL}, taskId=task["id"], contextId="ctx-other")["error"]
    assert error["code"] == -32602 and "ctx-other" in error["message"] and task["contextId"] in error["message"]


def test_an_empty_task_id_or_context_id_is_none_given_as_a_proto3_strings_default(client):
    """taskId "" was looked up as a task (-32001), and a turn's contextId "" named another context."""
    first = client.send("m-1", {"order_id": "ORD-1", "amount": 5}, taskId="", contextId="")["result"]["task"]
    assert first["status"]["state"] == "TASK_STATE_COMPLETED" and first["contextId"].startswith("context-")
    task = paused(client, "m-2")
    done = client.send("m-3", {"approval": PROPOSAL}, taskId=task["id"], contextId="")["result"]["task"]
    assert done["id"] == task["id"] and done["status"]["state"] == "TASK_STATE_COMPLETED"


@pytest.mark.parametrize("field", ["messageId", "contextId", "taskId"])
def test_an_id_longer_than_a_task_keeps_is_refused_before_any_task(client, field):
    """Each id is kept with the task and said again in every answer, outside the 64 KiB a message's
    content may take: ids of a MiB each made one GetTask answer 1.8 MB and 1,000 tasks a GB."""
    ids = {"messageId": "m-1", field: "x" * 257}
    answer = client.send(ids.pop("messageId"), {"order_id": "ORD-1", "amount": 5}, **ids)
    assert answer["error"]["code"] == -32602 and "at most 256 characters" in answer["error"]["message"]
    assert client.refunds() == [] and client.call("ListTasks", {})["result"]["tasks"] == []


def test_a_message_without_a_context_gets_one_and_tasks_are_listed_by_it(client):
    first = client.send("m-1", {"order_id": "ORD-1", "amount": 5})["result"]["task"]
    second = client.send("m-2", {"order_id": "ORD-2", "amount": 5}, contextId=first["contextId"])["result"]["task"]
    client.send("m-3", {"order_id": "ORD-3", "amount": 5})
    assert first["contextId"] and second["contextId"] == first["contextId"]
    listed = client.call("ListTasks", {"contextId": first["contextId"]})["result"]["tasks"]
    assert sorted(task["id"] for task in listed) == sorted([first["id"], second["id"]])


def test_an_approval_of_exactly_the_proposal_continues_the_same_task_to_one_refund(client):
    task = paused(client)
    done = client.send("m-2", {"approval": PROPOSAL}, taskId=task["id"])["result"]["task"]
    assert done["id"] == task["id"] and done["status"]["state"] == "TASK_STATE_COMPLETED"
    assert done["artifacts"][0]["parts"][0]["text"] == "refund of $6,000.00 issued for ORD-9 (ref BILL-ORD-9)"
    roles = [turn["role"] for turn in done["history"]]
    assert roles == ["ROLE_USER", "ROLE_AGENT", "ROLE_USER"], "every turn stays in the history"
    assert done["history"][1]["parts"][0]["text"].startswith("approval required")
    again = client.send("m-2", {"approval": PROPOSAL}, taskId=task["id"])["result"]["task"]
    assert again == done, "the same follow-up delivered twice: the task as it is, nothing redone"
    later = client.send("m-3", {"approval": PROPOSAL}, taskId=task["id"])["error"]
    assert later["code"] == -32004, "an approval is single-use"
    assert client.refunds() == ["refund of $6,000.00 issued for ORD-9 (ref BILL-ORD-9)"]


@pytest.mark.parametrize("approval", [
    {**PROPOSAL, "amount": 9000.0}, {**PROPOSAL, "order_id": "ORD-10"}, {**PROPOSAL, "currency": "EUR"},
    {"order_id": "ORD-9", "amount": BIG}, "yes", None, [PROPOSAL]])
def test_an_approval_of_anything_else_leaves_the_task_paused_and_does_nothing(client, approval):
    task = paused(client)
    error = client.send("m-2", {"approval": approval}, taskId=task["id"])["error"]
    assert error["code"] == -32602 and "approving exactly what it proposed" in error["message"]
    still = client.call("GetTask", {"id": task["id"]})["result"]
    assert still["status"]["state"] == "TASK_STATE_INPUT_REQUIRED" and client.refunds() == []
    done = client.send("m-3", {"approval": PROPOSAL}, taskId=task["id"])["result"]["task"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED", "a refused approval did not use it up"


def test_a_canceled_paused_task_takes_no_approval(client):
    task = paused(client)
    canceled = client.call("CancelTask", {"id": task["id"]})["result"]
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
    # The question it waited on stays in its history, as it does when the task goes on: every message exchanged
    assert [turn["role"] for turn in canceled["history"]] == ["ROLE_USER", "ROLE_AGENT"], canceled["history"]
    assert canceled["history"][1]["parts"][0]["text"] == task["status"]["message"]["parts"][0]["text"]
    assert client.call("GetTask", {"id": task["id"]})["result"]["history"] == canceled["history"]
    error = client.send("m-2", {"approval": PROPOSAL}, taskId=task["id"])["error"]
    assert error["code"] == -32004 and "canceled" in error["message"] and client.refunds() == []


def test_another_callers_task_cannot_be_continued_or_told_apart_from_none():
    client = Client("in-process")
    task = paused(client)
    client.app.token = "other"  # now a second caller, with its own credential
    other = {**HEADERS, "Authorization": "Bearer other"}

    def follow_up(task_id):
        return client.call("SendMessage", {"message": {"messageId": f"m-{task_id}", "role": "ROLE_USER",
                                                       "taskId": task_id, "parts": [{"data": {"approval": PROPOSAL}}]}},
                           other)["error"]
    theirs, nobodys = follow_up(task["id"]), follow_up("task-404")
    assert theirs["code"] == nobodys["code"] == -32001
    assert theirs["message"].replace(task["id"], "ID") == nobodys["message"].replace("task-404", "ID")
    assert client.refunds() == []


def test_sixteen_approvals_at_once_release_the_refund_once(client):
    task = paused(client)
    answers, start = [], threading.Barrier(16, timeout=10)

    def approve(number):
        own = Client.__new__(Client)  # the same peer; each thread its own ids and connection
        own.__dict__.update(client.__dict__, ids=0)
        if isinstance(client.transport, HttpTransport):
            own.transport = HttpTransport(timeout=5)
        start.wait()
        answers.append(own.send(f"m-approve-{number}", {"approval": PROPOSAL}, taskId=task["id"]))
    threads = [threading.Thread(target=approve, args=(n,)) for n in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    completed = [a for a in answers if "result" in a]
    assert len(answers) == 16 and len(completed) == 1, answers
    assert {a["error"]["code"] for a in answers if "error" in a} == {-32004}
    assert client.refunds() == ["refund of $6,000.00 issued for ORD-9 (ref BILL-ORD-9)"]


def test_an_order_waiting_for_approval_is_not_asked_again_and_is_refunded_once(client):
    first = paused(client, "m-1")
    again = client.send("m-2", {"order_id": "ORD-9", "amount": BIG})["result"]["task"]
    assert again["id"] == first["id"], "the same request again gets the task already waiting"
    other = client.send("m-3", {"order_id": "ORD-9", "amount": BIG + 1})["result"]["task"]
    assert other["status"]["state"] == "TASK_STATE_REJECTED"
    assert f"task {first['id']} is paused, waiting for its caller" in other["status"]["message"]["parts"][0]["text"]
    done = client.send("m-4", {"approval": PROPOSAL}, taskId=first["id"])["result"]["task"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED" and len(client.refunds()) == 1


def test_a_new_request_racing_an_approval_never_fails_it():
    for round_number in range(40):
        client = Client("in-process")
        task = paused(client)
        answers, start = {}, threading.Barrier(2, timeout=5)

        def act(name, params):
            start.wait()
            answers[name] = client.call("SendMessage", params)
        approve = {"message": {"messageId": "m-2", "role": "ROLE_USER", "taskId": task["id"],
                               "parts": [{"data": {"approval": PROPOSAL}}]}}
        ask = {"message": {"messageId": "m-3", "role": "ROLE_USER", "metadata": {"skillId": "process_refund"},
                           "parts": [{"data": {"order_id": "ORD-9", "amount": BIG}}]}}
        threads = [threading.Thread(target=act, args=(name, params)) for name, params in
                   (("approve", approve), ("ask", ask))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        assert answers["approve"]["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED", round_number
        assert answers["ask"]["result"]["task"]["id"] == task["id"], "the new request gets the same task"
        assert len(client.refunds()) == 1


def test_a_claim_held_by_a_paused_task_goes_when_the_task_is_canceled_or_forgotten():
    client = Client("in-process")
    task = paused(client, "m-1")
    client.call("CancelTask", {"id": task["id"]})
    assert paused(client, "m-2")["id"] != task["id"], "canceled: the order may be asked for again"
    client.peer.store.max_tasks = 1
    client.send("m-3", {"order_id": "ORD-10", "amount": 5})  # pushes the paused task out
    again = paused(client, "m-4")
    done = client.send("m-5", {"approval": PROPOSAL}, taskId=again["id"])["result"]["task"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    assert client.refunds() == ["refund of $5.00 issued for ORD-10 (ref BILL-ORD-10)",
                                "refund of $6,000.00 issued for ORD-9 (ref BILL-ORD-9)"]


def test_the_0_3_wire_continues_a_task_with_message_send():
    client = Client("in-process", wire=wire_v03)
    headers = {"Content-Type": "application/json", "Authorization": "Bearer t0k"}

    def send(message_id, data, **fields):
        return client.call("message/send", {"message": {
            "kind": "message", "messageId": message_id, "role": "user", "metadata": {"skillId": "process_refund"},
            "parts": [{"kind": "data", "data": data}], **fields}}, headers)["result"]
    task = send("m-1", {"order_id": "ORD-9", "amount": BIG})
    assert task["status"]["state"] == "input-required"
    done = send("m-2", {"approval": PROPOSAL}, taskId=task["id"], contextId=task["contextId"])
    assert done["id"] == task["id"] and done["status"]["state"] == "completed"
    assert [turn["role"] for turn in done["history"]] == ["user", "agent", "user"]


def test_the_approval_lesson_prints_the_same_frames_on_both_transports_and_ends_in_one_refund():
    runs = cli_together(*[("--scenario", "approval", *extra) for extra in ([], ["--transport", "http"])])
    for done in runs:
        assert done.returncode == 0 and done.stderr == "", done.stderr
    shown = [[line for line in done.stdout.splitlines() if not line.startswith("[transport]")] for done in runs]
    assert shown[0] == shown[1], "the same frames, byte for byte, in process and over HTTP"
    answers = [line for line in shown[0] if line.startswith("<-- {")]
    states = [json.loads(line[4:]).get("result", {}).get("task", {}).get("status", {}).get("state")
              or json.loads(line[4:])["error"]["code"] for line in answers]
    assert states == ["TASK_STATE_INPUT_REQUIRED", -32602, -32602, "TASK_STATE_COMPLETED", -32004]
    task_ids = {json.loads(line[4:])["params"]["message"].get("taskId") for line in shown[0] if line.startswith("--> {")}
    assert task_ids == {None, "task-1"}, "every follow-up continues the same task"
    assert sum("refund of $6,200.00 issued" in line for line in shown[0] if line.startswith("[support] trusted")) == 1


def test_the_approval_lesson_on_the_essays_wire_says_it_cannot_continue_a_task_and_exits_2():
    done = cli_once("--scenario", "approval", "--wire", "essay")
    assert done.returncode == 2, "a flag the lesson cannot be shown with, as any input that cannot be used"
    assert "the essay's tasks/send has no taskId to continue the task with" in done.stdout + done.stderr
    assert "refund of $6,200.00 issued" not in done.stdout


@pytest.mark.parametrize("length, shown", [(0, 0), (1, 1), (2, 2), (10, 3), (None, 3)])
def test_send_message_returns_as_much_history_as_its_configuration_asks(client, length, shown):
    task = paused(client)
    configuration = {} if length is None else {"configuration": {"historyLength": length}}
    message = {"messageId": "m-2", "role": "ROLE_USER", "taskId": task["id"], "parts": [{"data": {"approval": PROPOSAL}}]}
    done = client.call("SendMessage", {"message": message, **configuration})["result"]["task"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    history = done.get("history", [])
    assert len(history) == shown and [turn["messageId"] for turn in history] == ["m-1", f"{task['id']}-asked-1", "m-2"][3 - shown:]


@pytest.mark.parametrize("configuration", [{"historyLength": -1}, {"historyLength": "2x"}, {"historyLength": 1.5}, [], "x"])
def test_a_bad_history_length_is_refused_before_the_refund(client, configuration):
    message = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"data": {"order_id": "ORD-1", "amount": 5}}]}
    error = client.call("SendMessage", {"message": message, "configuration": configuration})["error"]
    assert error["code"] == -32602 and client.refunds() == []


def test_the_duplicate_lesson_answers_every_delivery_with_one_task_on_both_transports():
    runs = cli_together(*[("--scenario", "duplicate", *extra) for extra in ([], ["--transport", "http"])])
    for done in runs:
        assert done.returncode == 0 and done.stderr == "", done.stderr
    shown = [[line for line in done.stdout.splitlines() if not line.startswith("[transport]")] for done in runs]
    assert shown[0] == shown[1], "the same frames, byte for byte, in process and over HTTP"
    sent = [json.loads(line[4:])["params"]["message"]["messageId"] for line in shown[0] if line.startswith("--> {")]
    assert sent == ["msg-1", "msg-1", "msg-2", "msg-3"], "the retry resends the very same message"
    tasks = [json.loads(line[4:])["result"]["task"] for line in shown[0] if line.startswith("<-- {")]
    assert [(t["id"], t["status"]["state"]) for t in tasks] == [("task-1", "TASK_STATE_COMPLETED")] * 3 + [
        ("task-2", "TASK_STATE_REJECTED")], "a copy uses up no task id; the different request is rejected"
    assert "task task-1 already did this: refund of $75.00" in tasks[3]["status"]["message"]["parts"][0]["text"]
    assert shown[0][-1] == ("[support] four deliveries: 3 answers are task task-1 itself; task-2 (rejected): a new task "
                            "that did nothing, naming task task-1 as the one that refunded; one task refunded "
                            "ORD-5100, as billing's answers say (its ledger is not read from here)"), \
        "the closing sentence is true of the four answers above"


def test_a_duplicate_delivery_uses_up_no_task_id(client):
    first = client.send("m-1", {"order_id": "ORD-1", "amount": 5})["result"]["task"]
    assert client.send("m-1", {"order_id": "ORD-1", "amount": 5})["result"]["task"]["id"] == first["id"]
    assert client.send("m-2", {"order_id": "ORD-1", "amount": 5})["result"]["task"]["id"] == first["id"]
    second = client.send("m-3", {"order_id": "ORD-2", "amount": 5})["result"]["task"]
    assert (first["id"], second["id"]) == ("task-1", "task-2"), "the very next counter id"
    assert len(client.call("ListTasks", {})["result"]["tasks"]) == 2


def test_a_cancel_racing_an_approval_never_leaves_a_refunded_task_canceled():
    for round_number in range(40):
        client = Client("in-process")
        task = paused(client)
        answers, start = {}, threading.Barrier(2, timeout=5)

        def act(name, method, params):
            start.wait()
            answers[name] = client.call(method, params)
        approve = {"message": {"messageId": "m-2", "role": "ROLE_USER", "taskId": task["id"],
                               "parts": [{"data": {"approval": PROPOSAL}}]}}
        threads = [threading.Thread(target=act, args=("approve", "SendMessage", approve)),
                   threading.Thread(target=act, args=("cancel", "CancelTask", {"id": task["id"]}))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        final = client.call("GetTask", {"id": task["id"]})["result"]["status"]["state"]
        won = ["approve" if "result" in answers["approve"] else None, "cancel" if "result" in answers["cancel"] else None]
        assert won.count(None) == 1, (round_number, answers)  # exactly one of the two wins
        assert (final == "TASK_STATE_COMPLETED") == bool(client.refunds()), (round_number, final)
        assert final == ("TASK_STATE_COMPLETED" if won[0] else "TASK_STATE_CANCELED")


def test_follow_ups_count_against_the_stores_byte_budget():
    from peers.a2a.model import Message, Part, Task, TaskState
    from peers.store import TaskStore
    store = TaskStore(max_bytes=10_000)
    for number in range(3):
        task, _ = store.add(lambda: Task(f"t-{number}", (TaskState.SUBMITTED, TaskState.WORKING, TaskState.INPUT_REQUIRED)),
                            "", f"m-{number}", "x" * 1_000)
        store.pause(task, "what it waits for")
    for number in range(3):
        follow_up = Message(f"f-{number}", "user", (Part(text="y"),), task_id=f"t-{number}")
        if f"t-{number}" in store.tasks:
            store.resume(f"t-{number}", "", (follow_up,), "y" * 4_000, lambda waiting: None)
        assert store.kept_bytes <= store.max_bytes
    assert "t-2" in store.tasks and store.kept_bytes == sum(store.sizes.values())


def test_a_follow_up_whose_part_is_a_media_type_the_skill_does_not_take_is_refused_and_the_task_waits(client):
    """Spec 3.1.1: a part of a media type the skill does not take is ContentTypeNotSupported
    (-32005), on a later turn as on the first; the task still waits for its approval."""
    task = paused(client)
    message = {"messageId": "m-2", "role": "ROLE_USER", "taskId": task["id"],
               "parts": [{"data": {"approval": PROPOSAL}, "mediaType": "image/png"}]}
    error = client.call("SendMessage", {"message": message})["error"]
    assert error["code"] == -32005 and "image/png" in error["message"]
    done = client.send("m-3", {"approval": PROPOSAL}, taskId=task["id"])["result"]["task"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED" and len(client.refunds()) == 1
