"""The allowlist as the live page edits it: checked by the same loader as the file, used by
the next run, and saved to the file only when asked, atomically.

Essay: Discovery is not trust (the allowlist decides). The text the page sends is written
to a private temporary folder and read there by config.load_allowlist, so an edit is held
to exactly what the file is (each problem named, with line and column) and a run started
with it reads it as `--allowlist`. Those folders sit in the page server's own `Scratch`
folder, which it removes whole when it stops, whatever a run or a refused request left
there. Saving writes a temporary file in the allowlist's own folder, then os.replace()s
the allowlist with it: a reader sees the old file or the new one, never half of either.
Not here: the trust gate itself (a2a_delegation.py).
"""
from __future__ import annotations

import hashlib
import os
import shutil
import tempfile

from peers.support.calling.config import load_allowlist
from peers.support.calling.files import MAX_FILE_CHARS, ConfigError
from peers.support.web.runs_by_id import MAX_KEPT, MAX_LIVE
from transports.named_files import read_named

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Callable

SHOWN_AS = "the allowlist in the page"  # what a problem's file is called, not a temporary path
MOST_KEPT = MAX_KEPT + MAX_LIVE  # edited allowlists the shown commands name: one a run the page holds
DEFAULT = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))), "allowlist.json")  # beside a2a_delegation.py: the flag's default


class Scratch:
    """The page server's private folder for the texts it checks and runs with; `remove()`,
    when the server stops, deletes it and everything in it."""

    def __init__(self) -> None:
        self.folder = tempfile.mkdtemp(prefix="a2a-web-allowlist-")

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


class Edited:
    """The page's allowlist text in a private file of its own (in `within`, the server's
    Scratch folder, if given); `remove()` deletes it."""

    def __init__(self, text: str, within: str | None = None) -> None:
        if len(text) > MAX_FILE_CHARS:
            raise ConfigError(f"{SHOWN_AS}: larger than {MAX_FILE_CHARS:,} characters")
        self.folder = tempfile.mkdtemp(prefix="a2a-web-allowlist-", dir=within)
        self.path = os.path.join(self.folder, "allowlist.json")
        try:
            with open(self.path, "w", encoding="utf-8") as out:
                out.write(text)
        except (OSError, UnicodeEncodeError):  # nothing half made is left behind
            self.remove()
            raise

    def problem(self) -> str | None:
        """None when the loader takes it; else the loader's own words, naming the page's text."""
        try:
            load_allowlist(self.path)
        except ConfigError as exc:
            return str(exc).replace(self.path, SHOWN_AS)
        return None

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def check(text: str, within: str | None = None) -> tuple[str | None, list[dict[str, str]]]:
    """(the problem, or None; and the entries, by name and endpoint, when there is none)."""
    try:
        edited = Edited(text, within)
    except ConfigError as exc:
        return str(exc), []
    try:
        problem = edited.problem()
        entries = [] if problem else [{"name": entry.name, "endpoint": entry.endpoint}
                                      for entry in load_allowlist(edited.path)]
        return problem, entries
    finally:
        edited.remove()


def for_a_run(text: str, within: str | None = None) -> tuple[str | None, str, Callable[[], None]]:
    """(the problem or None, the file a run reads as --allowlist, what removes it afterwards)."""
    try:
        edited = Edited(text, within)
    except ConfigError as exc:
        return str(exc), "", lambda: None
    problem = edited.problem()
    if problem:
        edited.remove()
    return problem, edited.path, edited.remove


def kept(text: str, within: str) -> str:
    """A copy of an edited allowlist that the command the page shows can name: in the server's
    Scratch folder (`within`) until the page stops, named by its content, so an edit run
    again is one file, not one per run. The newest MOST_KEPT are kept (as many as the runs
    the page keeps and runs at once): whoever holds the page's token can send a new text a
    request, and the folder must not grow with them."""
    path = os.path.join(within, f"edited-{hashlib.sha256(text.encode()).hexdigest()[:12]}.json")
    if os.path.exists(path):
        os.utime(path)  # used again: among the newest
    else:
        with open(path, "w", encoding="utf-8") as out:
            out.write(text)
    copies = sorted((entry.stat().st_mtime_ns, entry.path) for entry in os.scandir(within)
                    if entry.name.startswith("edited-") and entry.path != path)
    for _, older in copies[:max(0, len(copies) + 1 - MOST_KEPT)]:
        try:
            os.remove(older)
        except OSError:
            pass  # removed by a request alongside
    return path


def save(path: str, text: str) -> str | None:
    """Replace the allowlist file with `text`, if the loader takes it; None, or why not."""
    problem, _ = check(text)
    if problem:
        return problem
    text = text if text.endswith("\n") else text + "\n"  # a text file ends with one, as the file did (POSIX)
    # The file a link names is the allowlist: replaced, the link itself would become a new file and
    # the file it named be left as it was. The new file keeps the old one's mode (mkstemp's is 0600).
    target = os.path.realpath(path)
    folder = os.path.dirname(target)
    try:
        handle, temporary = tempfile.mkstemp(prefix=".allowlist-", suffix=".json", dir=folder)
        try:
            if os.path.exists(target):
                os.fchmod(handle, os.stat(target).st_mode & 0o7777)
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(text)
                out.flush()
                os.fsync(out.fileno())
            os.replace(temporary, target)
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError as exc:
        return f"could not save {path}: {exc.strerror or exc}"
    return None


def read(path: str) -> str:
    """The allowlist file's text as it is now ("" if it cannot be read: the page says so)."""
    try:
        return read_named(path, 4 * MAX_FILE_CHARS).decode("utf-8")[:MAX_FILE_CHARS]
    except (OSError, UnicodeDecodeError):
        return ""
