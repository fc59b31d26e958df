"""A store file keeps no credential, and only its owner may read it.

A served peer's store (peers/durable.py) holds every caller's tasks, messages and the
refunds it made: what one caller sent is not another local user's to read, and the owner
of each task must not be a secret that proves it. So:
- the file is made readable and writable by its owner alone (0600, whatever the umask);
  SQLite makes its -wal and -shm files with the database's mode; a file an earlier version
  made world-readable is narrowed, as are its -wal and -shm, when this process owns it;
- freed pages are zeroed (secure_delete), so nothing removed lingers in the file;
- a task's owner is a digest of the bearer token (peers/app.py `owner_of_bearer`), never
  the token; owners an earlier version wrote in clear (a task's, an effect's) are replaced by their digest when
  the file is opened, and the file checkpointed at once, so the caller still finds its
  tasks and neither the file nor its WAL holds the token from then on.
"""
import json
import os
import sqlite3

from peers.app import owner_of_bearer
from peers.durable_read import MAX_ROW_CHARS
from peers.tenants import PREFIX

# How owners are spelled by every way of telling who calls: a scheme's prefix, or "" for
# anyone (a peer that asks no credential), either within a tenant (peers/tenants.py: never
# written in clear). Anything else is a bearer token in clear.
OWNER_PREFIXES = ("bearer:", "apikey:", "basic:", "client:", "mtls:", PREFIX)


def private_file(path: str) -> None:
    """Make `path` 0600 if it is new; narrow it, and its -wal and -shm, if this process
    owns them and they are readable by others. A path that is a link is followed, as
    SQLite follows it: the file it names is the one made or narrowed."""
    path = os.path.realpath(path)
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW, 0o600))
    except OSError:
        pass  # it exists (or cannot be made: SQLite says why, in one line)
    for name in (path, path + "-wal", path + "-shm"):
        try:
            found = os.lstat(name)
            if found.st_uid == os.geteuid() and found.st_mode & 0o077 and not os.path.islink(name):  # no race to a link
                os.chmod(name, found.st_mode & 0o700)
        except OSError:
            continue


def scrub_owners(db: sqlite3.Connection) -> int:
    """Replace owners written in clear by an earlier version with their digest, a task's and an
    effect's (its column, and in its row's JSON: that version's ledger named its caller so too); how
    many rows of them were. Called inside the opening transaction, the file migrated first (a task's
    messages are in its row, under its owner; an effect's owner a column, read from its JSON)."""
    clear = [owner for (owner,) in db.execute("SELECT DISTINCT owner FROM tasks") if _in_clear(owner)]
    for owner in clear:
        db.execute("UPDATE tasks SET owner = ? WHERE owner = ?", (owner_of_bearer(owner), owner))
    effects = 0
    db.create_function("scrubbed", 1, _scrubbed, deterministic=True)  # each row as SQLite comes to it: none held
    for (owner,) in db.execute("SELECT DISTINCT owner FROM effects WHERE length(owner) <= ?",  # (a few: one a
                               (MAX_ROW_CHARS,)).fetchall():  # caller; one longer is refused, unread: durable_ledger.py)
        if _in_clear(owner):
            effects += db.execute("UPDATE effects SET owner = ?, body = scrubbed(body) WHERE owner = ?",
                                  (owner_of_bearer(owner), owner)).rowcount
    return len(clear) + effects


def _scrubbed(body: object) -> object:
    """An effect's row's JSON, its owner in clear replaced by its digest; any other, as it was (judged as it is read)."""
    try:
        effect = json.loads(body) if type(body) is str else None
    except (ValueError, RecursionError):
        return body
    if type(effect) is not dict or not _in_clear(effect.get("owner")):
        return body
    effect["owner"] = owner_of_bearer(effect["owner"])
    return json.dumps(effect, separators=(",", ":"))


def _in_clear(owner: object) -> bool:
    return isinstance(owner, str) and bool(owner) and not owner.startswith(OWNER_PREFIXES)

