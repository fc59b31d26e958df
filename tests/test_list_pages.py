"""ListTasks's page tokens are cursors (A2A 1.0 section 3.1.4): tasks made or updated
between two pages neither repeat nor push out one already there, and a token that is not
this caller's, for this listing, from this process, is one -32602 line, never a task.
Real frames through the real app, over the memory store and the SQLite one alike."""
import base64
import itertools
import json
import random

import pytest

from peers import billing
from peers.a2a import wire_v10
from peers.app import PeerApp
from peers.durable import open_store
from transports.inprocess import InProcessTransport

HEADERS = {"Content-Type": "application/json", "A2A-Version": "1.0"}
MAX_PAGES = 40  # every walk below ends well before


def stepping_clock():
    """A served peer's clock, one second on per reading: each change a later time."""
    seconds = itertools.count()

    def now():
        n = next(seconds)
        return f"2026-11-30T{n // 3600:02d}:{n // 60 % 60:02d}:{n % 60:02d}.000Z"
    return now


class Billing:
    """billing served in process on one kind of store; `call` as a given bearer token."""

    def __init__(self, kind, tmp_path, clock=None):
        self.path, self.kind, self.clock = tmp_path / "billing.db", kind, clock or stepping_clock()
        self.start()

    def start(self):
        store, ledger = open_store(str(self.path)) if self.kind == "durable" else (None, None)
        self.peer = billing.billing_agent(store=store, ledger=ledger, clock=self.clock)
        self.app = PeerApp(self.peer, wire_v10, token="t0k")

    def restart(self):
        if self.kind == "durable":
            self.peer.store.file.close()
        self.start()

    def call(self, method, params, token="t0k"):
        self.app.token = token  # the app knows one caller at a time: the one calling now
        frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
        answer = InProcessTransport({billing.BASE_URL: self.app}).post(
            billing.BASE_URL + "/a2a", frame, {**HEADERS, "Authorization": f"Bearer {token}"})
        return json.loads(answer.body)

    def refund(self, n, amount=5, token="t0k", context=None):
        message = {"messageId": f"m-{n}", "role": "ROLE_USER",
                   "parts": [{"data": {"order_id": f"ORD-{n}", "amount": amount}}]}
        if context:
            message["contextId"] = context
        return self.call("SendMessage", {"message": message}, token)["result"]["task"]["id"]

    def page(self, token="", size=2, **filters):
        return self.call("ListTasks", {"pageSize": size, "pageToken": token, **filters})["result"]

    def walk(self, size, between=lambda: None, **filters):
        """Every page in turn, `between()` run after each; the ids in the order listed."""
        listed, token = [], ""
        for _ in range(MAX_PAGES):
            page = self.page(token, size, **filters)
            listed += [task["id"] for task in page["tasks"]]
            token = page["nextPageToken"]
            if not token:
                return listed
            between()
        raise AssertionError(f"no last page after {MAX_PAGES}")


@pytest.fixture(params=["memory", "durable"])
def served(request, tmp_path):
    served = Billing(request.param, tmp_path)
    yield served
    if served.kind == "durable":
        served.peer.store.file.close()


def test_a_task_made_between_two_pages_is_not_listed_and_pushes_no_task_into_the_next(served):
    there = [served.refund(n) for n in range(5)]
    first = served.page()
    made = served.refund(99)  # on top of the listing now
    second = served.page(first["nextPageToken"])
    last = served.page(second["nextPageToken"])
    listed = [t["id"] for page in (first, second, last) for t in page["tasks"]]
    assert listed == there[::-1], "each task there at the first page, once, newest first"
    assert last["nextPageToken"] == "" and last["totalSize"] == 6, "totalSize counts the tasks there now"
    assert served.page(size=1)["tasks"][0]["id"] == made, "a new listing shows it first"


def test_many_pages_with_a_task_made_after_each_list_every_task_once(served):
    there = [served.refund(n) for n in range(23)]
    made = itertools.count(100)
    listed = served.walk(4, between=lambda: served.refund(next(made)))
    assert listed == there[::-1] and next(made) == 105, "six pages, a task made after each of the first five"


def test_a_task_updated_between_pages_moves_to_the_top_and_is_listed_at_most_once(served):
    """Section 3.1.4's order is by last update, newest first: an update moves a task above
    the cursor. Listed already: not again. Not listed yet: not on the pages left either,
    and a new listing shows it first."""
    waiting_old = served.refund(1, amount=6000)  # above the approval limit: input-required
    done = [served.refund(n) for n in (2, 3)]
    waiting_new = served.refund(4, amount=6000)
    first = served.page()
    assert [t["id"] for t in first["tasks"]] == [waiting_new, done[1]]
    for task_id in (waiting_new, waiting_old):  # both updated (canceled) between the pages
        assert served.call("CancelTask", {"id": task_id})["result"]["status"]["state"] == "TASK_STATE_CANCELED"
    rest = served.page(first["nextPageToken"])
    assert [t["id"] for t in rest["tasks"]] == [done[0]] and rest["nextPageToken"] == ""
    assert [t["id"] for t in served.page(size=4)["tasks"]] == [waiting_old, waiting_new, *done[::-1]]


def test_filters_page_as_the_whole_listing_does(served):
    ours = [served.refund(n, context="ticket-7") for n in range(5)]
    [served.refund(n) for n in range(10, 14)]
    assert served.walk(2, contextId="ticket-7") == ours[::-1]
    assert served.walk(3, status="TASK_STATE_COMPLETED") == served.walk(100)


def test_tasks_without_a_time_page_newest_made_first(tmp_path):
    """A learner's run stamps no times: the number each task was made with orders them."""
    served = Billing("memory", tmp_path, clock=lambda: None)
    there = [served.refund(n) for n in range(7)]
    assert served.walk(3, between=lambda: served.refund(50)) == there[::-1]


def test_a_cursor_is_opaque_bounded_and_names_no_task(served):
    ids = [served.refund(n) for n in range(3)]
    token = served.page(size=1)["nextPageToken"]
    raw = base64.urlsafe_b64decode(token)
    assert len(token) <= wire_v10.MAX_PAGE_TOKEN and token.isascii() and "=" not in token.rstrip("=")
    assert not any(task_id.encode() in raw or task_id in token for task_id in ids)
    assert b"2026" not in raw, "the place is sealed, not spelled out"


def hostile_tokens(real):
    rng = random.Random(3214)
    flipped = real[:10] + ("A" if real[10] != "A" else "B") + real[11:]
    tokens = [
        "".join(chr(rng.randrange(0x20, 0x2FFF)) for _ in range(60)),  # random characters
        "".join(chr(rng.randrange(0x21, 0x7F)) for _ in range(72)),  # random ASCII, a token's length
        base64.urlsafe_b64encode(rng.randbytes(54)).decode(),  # well-formed, never sealed here
        base64.urlsafe_b64encode(b"\x01" + rng.randbytes(53)).decode(),  # the right version byte
        "A" * 10_000, "A" * 101, "=" * 72, "0", "2", "-1", "%00", " " + real, real + "A", real[:-4],
        flipped, real.replace("-", "+").replace("_", "/"), real.lower(),
        5, 2.5, True, [], {}, [real], {"token": real},
    ]
    # a variant that happens to spell the real token (one with no "-" or "_" to replace, say) is not hostile
    return [token for token in tokens if token != real]


def test_hostile_page_tokens_are_one_line_of_invalid_params_and_no_tasks(served):
    [served.refund(n) for n in range(3)]
    real = served.page(size=1)["nextPageToken"]
    for token in hostile_tokens(real):
        answer = served.call("ListTasks", {"pageSize": 1, "pageToken": token})
        assert "result" not in answer and answer["error"]["code"] == -32602, token
        assert "\n" not in answer["error"]["message"] and len(answer["error"]["message"]) < 300
    assert served.page(real, size=1)["tasks"], "the real token still works"


def test_another_callers_token_or_other_filters_read_nothing(served):
    mine = [served.refund(n) for n in range(3)]
    theirs = [served.refund(n, token="other") for n in range(3)]  # same messageIds: another owner's
    token = served.page(size=1, token="")["nextPageToken"]
    answer = served.call("ListTasks", {"pageSize": 1, "pageToken": token}, token="other")
    assert answer["error"]["code"] == -32602 and not any(i in json.dumps(answer) for i in mine + theirs)
    other_listing = served.call("ListTasks", {"pageSize": 1, "pageToken": token, "contextId": "x"})
    assert other_listing["error"]["code"] == -32602, "a cursor is bound to the filters it was made with"
    their_token = served.call("ListTasks", {"pageSize": 1}, token="other")["result"]["nextPageToken"]
    assert served.call("ListTasks", {"pageSize": 1, "pageToken": their_token})["error"]["code"] == -32602
    assert served.walk(1) == mine[::-1]


def test_a_token_from_before_a_restart_is_refused_and_listing_again_works(served):
    there = [served.refund(n) for n in range(3)]
    token = served.page(size=1)["nextPageToken"]
    served.restart()
    assert served.call("ListTasks", {"pageSize": 1, "pageToken": token})["error"]["code"] == -32602
    if served.kind == "durable":  # the file kept them, in the same order
        assert served.walk(2) == there[::-1]


def test_null_page_size_is_the_default_as_null_page_token_is_the_first_page(served):
    """proto JSON's null is an unset field: pageSize null lists as many as the default (50),
    as pageToken null and historyLength null are read as absent; a wrong size is still refused."""
    [served.refund(n) for n in range(3)]
    answer = served.call("ListTasks", {"pageSize": None, "pageToken": None, "historyLength": None})
    assert len(answer["result"]["tasks"]) == 3 and answer["result"]["pageSize"] == 50, answer
    for size in (0, 101, "5x", 2.5, True):
        assert served.call("ListTasks", {"pageSize": size})["error"]["code"] == -32602, size


def test_a_page_of_large_tasks_is_cut_short_so_its_answer_stays_within_what_a_client_reads(served):
    """Each task keeps a 60 KB message: 30 of them would be a 2 MB answer, past the 1 MiB a
    client (ours among them) reads. A page stops short instead, and the walk lists each once."""
    made = []
    for n in range(30):
        made.append(served.call("SendMessage", {"message": {
            "messageId": f"big-{n}", "role": "ROLE_USER", "metadata": {"note": "x" * 60_000},
            "parts": [{"data": {"order_id": f"ORD-B{n}", "amount": 5}}]}})["result"]["task"]["id"])
    answer = InProcessTransport({billing.BASE_URL: served.app}).post(billing.BASE_URL + "/a2a", json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {"pageSize": 100}}).encode(),
        {**HEADERS, "Authorization": "Bearer t0k"})
    first = json.loads(answer.body)["result"]
    assert len(answer.body) < 1 << 20 and 1 <= len(first["tasks"]) < 30 and first["nextPageToken"]
    assert first["totalSize"] == 30
    assert served.walk(100) == made[::-1], "every task once, newest first"
