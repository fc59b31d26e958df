"""A served peer's store file (`serve --store`) holds no credential, and only its owner may
read it: the bearer token that proves a caller is kept as a digest, the file and its WAL are
0600 whatever the umask, and a file an earlier version wrote (tokens in clear, readable by
all) is put right when it is opened, its callers keeping their tasks. Real SQLite files,
the real store, billing and app, in process."""
import contextlib
import json
import os
import sqlite3
import stat

import pytest

from peers import billing
from peers.a2a import wire_v10
from peers.a2a.errors import TaskNotFound
from peers.app import PeerApp
from peers.durable import open_store
from peers.restart import restarted
from peers.store import content_of
from transports.inprocess import InProcessTransport

TOKEN = "TOKEN-d6b1c0ffee5eca1-secret"


def served_on(path, token=TOKEN):
    """billing on a store file at `path`, as `serve --store` makes it; (peer, call)."""
    store, ledger = open_store(str(path))
    peer = billing.billing_agent(store=store, ledger=ledger)
    restarted(peer, str(path))
    transport = InProcessTransport({billing.BASE_URL: PeerApp(peer, wire_v10, token=token)})

    def call(method, params):
        frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
        return json.loads(transport.post(billing.BASE_URL + "/a2a", frame, {
            "Content-Type": "application/json", "A2A-Version": "1.0", "Authorization": f"Bearer {token}"}).body)
    return peer, call


def refund(message_id, order):
    return {"message": {"messageId": message_id, "role": "ROLE_USER", "parts": [{"data": {
        "order_id": order, "amount": 5}}]}}


def on_disk(path) -> bytes:
    """Every byte the store keeps: the database, its WAL and its shared-memory index."""
    return b"".join(open(name, "rb").read() for name in (str(path), f"{path}-wal", f"{path}-shm")
                    if os.path.exists(name))


@pytest.fixture
def open_umask():
    before = os.umask(0o022)  # a stock shell's: new files readable by everyone
    yield
    os.umask(before)


def test_the_store_file_and_its_wal_are_their_owners_alone_whatever_the_umask(tmp_path, open_umask):
    path = tmp_path / "billing.db"
    peer, call = served_on(path)
    assert call("SendMessage", refund("m-1", "ORD-1"))["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    made = [name for name in (str(path), f"{path}-wal", f"{path}-shm") if os.path.exists(name)]
    assert f"{path}-wal" in made
    assert {name: stat.S_IMODE(os.stat(name).st_mode) & 0o077 for name in made} == dict.fromkeys(made, 0)
    peer.store.file.close()


def test_no_bearer_token_reaches_the_store_file_and_its_owner_still_finds_its_tasks(tmp_path):
    path = tmp_path / "billing.db"
    peer, call = served_on(path)
    task = call("SendMessage", refund("m-1", "ORD-1"))["result"]["task"]
    assert TOKEN.encode() not in on_disk(path), "the token, in the file or its WAL, while it serves"
    peer.store.file.close()
    assert TOKEN.encode() not in on_disk(path)
    with contextlib.closing(sqlite3.connect(path)) as db:
        owners = {owner for (owner,) in db.execute("SELECT owner FROM tasks")}
    assert len(owners) == 1 and owners.pop().startswith("bearer:")
    peer, call = served_on(path)  # restarted: the same token is the same caller
    assert call("GetTask", {"id": task["id"]})["result"]["id"] == task["id"]
    with pytest.raises(TaskNotFound):
        peer.store.get(task["id"], TOKEN)  # the token itself is no owner
    peer.store.file.close()


def test_a_store_an_earlier_version_wrote_with_tokens_in_clear_and_readable_by_all_is_put_right(tmp_path, open_umask):
    path = tmp_path / "billing.db"
    peer, _ = served_on(path)
    # As an earlier version kept it: the caller's token as the owner, in clear.
    made, _ = peer.store.add(lambda: peer._submitted(wire_v10.send_request(refund("m-9", "ORD-9")).message),
                             TOKEN, "m-9")
    peer.store.flush()
    peer.store.file.close()
    for name in (str(path), f"{path}-wal"):
        if os.path.exists(name):
            os.chmod(name, 0o644)
    assert TOKEN.encode() in on_disk(path), "the old file holds the token (else this test proves nothing)"
    peer, call = served_on(path)
    assert TOKEN.encode() not in on_disk(path), "scrubbed and on disk while it serves, not at a later checkpoint"
    assert call("GetTask", {"id": made.id})["result"]["id"] == made.id, "its caller still finds its task"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    peer.store.file.close()
    assert TOKEN.encode() not in on_disk(path), "scrubbed, and the freed pages zeroed"


def test_a_schema_2_store_with_tokens_in_clear_in_its_messages_table_keeps_none_once_migrated(tmp_path):
    """Schema 2 kept each message's owner in a table of its own, in clear too (an earlier
    version's): migrated, the table is dropped, its pages zeroed, and a resend still finds its task."""
    from test_durable_schema import as_schema_2
    path = tmp_path / "billing.db"
    peer, _ = served_on(path)
    message = wire_v10.send_request(refund("m-9", "ORD-9")).message
    made, _ = peer.store.add(lambda: peer._submitted(message), TOKEN, "m-9", content_of(message))
    peer.store.flush()
    peer.store.file.close()
    as_schema_2(path)
    with contextlib.closing(sqlite3.connect(path)) as db:
        assert db.execute("SELECT owner FROM messages").fetchall() == [(TOKEN,)], "else this test proves nothing"
    peer, call = served_on(path)
    assert TOKEN.encode() not in on_disk(path)
    assert call("SendMessage", refund("m-9", "ORD-9"))["result"]["task"]["id"] == made.id, "a resend: its task"
    peer.store.file.close()
    assert TOKEN.encode() not in on_disk(path)



def test_a_store_an_earlier_version_wrote_with_a_token_in_clear_in_an_effect_keeps_none_and_its_caller_keeps_it(tmp_path):
    """An earlier version kept each effect's owner in clear too (in the effect's row): only the tasks'
    owners were scrubbed, so the token stayed in the file, and the ledger named a caller no request is,
    so its own caller asking again for the refund was told it was done for another caller."""
    path = tmp_path / "billing.db"
    peer, call = served_on(path)
    task = call("SendMessage", refund("m-1", "ORD-1"))["result"]["task"]
    peer.store.file.close()
    with contextlib.closing(sqlite3.connect(path)) as db:  # as that version wrote it
        db.execute("UPDATE tasks SET owner = ?", (TOKEN,))
        db.execute("UPDATE effects SET body = json_set(body, '$.owner', ?)", (TOKEN,))
        db.execute("UPDATE effects SET owner = ?", (TOKEN,))  # its column, as migrating that version's rows makes it
        db.commit()
    assert TOKEN.encode() in on_disk(path), "else this test proves nothing"
    peer, call = served_on(path)
    assert TOKEN.encode() not in on_disk(path), "scrubbed, effects too, while it serves"
    again = call("SendMessage", refund("m-2", "ORD-1"))["result"]["task"]
    assert again["id"] == task["id"], again["status"]
    peer.store.file.close()
    assert TOKEN.encode() not in on_disk(path)

def test_a_store_path_that_is_a_link_makes_the_file_it_names_its_owners_alone(tmp_path, open_umask):
    (tmp_path / "elsewhere").mkdir()
    target, link = tmp_path / "elsewhere" / "billing.db", tmp_path / "billing.db"
    link.symlink_to(target)  # dangling: SQLite makes the file it names
    peer, call = served_on(link)
    call("SendMessage", refund("m-1", "ORD-1"))
    made = [name for name in (target, f"{target}-wal") if os.path.exists(name)]
    assert str(target) in map(str, made) and all(stat.S_IMODE(os.stat(name).st_mode) & 0o077 == 0 for name in made)
    peer.store.file.close()


def test_a_task_row_whose_owner_is_not_text_is_one_line_naming_the_file(tmp_path):
    """Owners an earlier version wrote in clear were looked for with str.startswith on whatever
    the column held: a blob raised TypeError as the file opened, a traceback, not one line."""
    from peers.durable import DurableError
    path = tmp_path / "billing.db"
    peer, call = served_on(path)
    call("SendMessage", refund("m-1", "ORD-1"))
    peer.store.file.close()
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute("UPDATE tasks SET owner = x'00'")
        db.commit()
    with pytest.raises(DurableError, match="holds a row this peer cannot read") as raised:
        open_store(str(path))
    assert str(raised.value).startswith(str(path)) and "\n" not in str(raised.value)
