"""`serve --store FILE` on a disk with no room: one line naming the file says so, not SQLite's words.

No real disk is filled. SQLite's own `PRAGMA max_page_count` makes a commit find no room
(SQLITE_FULL, as a full disk gives a write), and a file-size limit (RLIMIT_FSIZE, which any
process may lower for itself and its children) stops SQLite growing the file it maps beside a
store as it opens it: on a full disk that is "disk I/O error" (SQLITE_IOERR_SHMSIZE)."""
import json
import resource
import subprocess
import sys

from conftest import ROOT
from peers import billing
from peers.a2a import wire_v10
from peers.app import PeerApp
from peers.durable import open_store
from transports.inprocess import InProcessTransport

REFUND = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
    "messageId": "m-1", "role": "ROLE_USER", "parts": [{"data": {"order_id": "ORD-1", "amount": 5}}]}}}
HEADERS = {"Content-Type": "application/json", "A2A-Version": "1.0", "Authorization": "Bearer t0k"}


def a_store_with_a_refund(path):
    store, ledger = open_store(str(path))
    app = PeerApp(billing.billing_agent(store=store, ledger=ledger), wire_v10, token="t0k")
    InProcessTransport({billing.BASE_URL: app}).post(billing.BASE_URL + "/a2a", json.dumps(REFUND).encode(), HEADERS)
    store.file.close()


def test_a_store_opened_where_no_file_may_grow_says_in_one_line_that_there_is_no_room_naming_it(tmp_path):
    """As `serve --store` restarts on a full disk. It said "cannot be used as the store (disk I/O error)"."""
    path = tmp_path / "billing.db"
    a_store_with_a_refund(path)

    def no_room():  # in the child only: its files grow no further than 4 KiB
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
    # -B: it writes no bytecode, which the limit would cut short and leave for the session's other runs to fail on
    done = subprocess.run([sys.executable, "-B", str(ROOT / "a2a_delegation.py"), "serve", "billing-agent", "--port", "0",
                           "--store", str(path)], capture_output=True, text=True, timeout=30, preexec_fn=no_room)
    said = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    assert done.returncode == 2 and len(said) == 1, said
    if sys.version_info >= (3, 11):  # sqlite3 names SQLite's error (sqlite_errorname): the cause is known
        assert said[0].startswith(f"error: {path}: cannot be used as the store (no room to write it: its disk is full, "
                                  "or a file met its size limit; "), said
        assert "I/O error" not in said[0]
    else:  # 3.10 names no error: with room on the disk, an I/O error, its likely causes said, a size limit among them
        assert said[0].startswith(f"error: {path}: cannot be used as the store (a disk I/O error: it could not be read "
                                  "or written (a size limit or quota met, a failing device?); "), said


def test_a_commit_that_finds_no_room_stops_the_peer_with_one_line_saying_the_disk_is_full_naming_the_file(tmp_path):
    """SQLite says "database or disk is full"; the line says which store could not be written, and why."""
    path = tmp_path / "billing.db"
    a_store_with_a_refund(path)
    script = f"""
import json, sys
sys.path.insert(0, {str(ROOT)!r})
from peers import billing
from peers.a2a import wire_v10
from peers.app import PeerApp
from peers.durable import open_store
from transports.inprocess import InProcessTransport
store, ledger = open_store({str(path)!r})
(pages,) = store.file.db.execute("PRAGMA page_count").fetchone()
store.file.db.execute(f"PRAGMA max_page_count = {{pages}}")  # the file grows no further: as a full disk
app = PeerApp(billing.billing_agent(store=store, ledger=ledger), wire_v10, token="t0k")
for number in range(2, 200):
    frame = json.dumps({{**{REFUND!r}, "params": {{"message": {{"messageId": f"m-{{number}}", "role": "ROLE_USER",
                        "parts": [{{"data": {{"order_id": f"ORD-{{number}}", "amount": 5}}}}]}}}}}}).encode()
    InProcessTransport({{billing.BASE_URL: app}}).post(billing.BASE_URL + "/a2a", frame, {HEADERS!r})
print("every refund was written")
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 70 and done.stdout == "", (done.stdout, done.stderr[-2000:])
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(f"[store] {path}: a write failed (no room to write it: its disk is full, or a file "
                                  "met its size limit; "), done.stderr
    assert done.stderr.endswith("); stopping, so that nothing is answered that is not on disk\n")
