"""Files a person names (a flag's, a config's): opened so that nothing waits forever on one.

A name may be a pipe, not a file: `--trace >(jq .)` and `--registry <(make-registry)` are
useful, and a FIFO no program writes to (or reads from) is a mistake. Python's open()
waits, on such a FIFO, for a writer (or a reader) that may never come, and then a read
may wait for bytes that never come. So a name is opened without waiting (O_NONBLOCK):
a pipe with no writer reads as empty at once; one with no reader cannot be opened for
writing (ENXIO), said as such. A pipe's bytes are then read until it ends, for at most
PIPE_SECONDS. A regular file is read and written as open() would. Errors are OSError
with a strerror a person can act on; each caller says it in its own one line.
"""
from __future__ import annotations

import errno
import os
import stat
import time

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import TextIO

PIPE_SECONDS = 10.0  # how long a pipe's writer may take to finish: a program making a file's text


def read_named(path: str, most: int, seconds: float = PIPE_SECONDS) -> bytes:
    """At most `most` + 1 bytes of the file (one more than allowed: the caller says "too large")."""
    handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO opens at once, writer or not
    try:
        if stat.S_ISDIR(os.fstat(handle).st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a folder", path)
        chunks, size, deadline = [], 0, time.monotonic() + seconds
        while size <= most:
            try:
                chunk = os.read(handle, min(1 << 16, most + 1 - size))
            except BlockingIOError:  # a pipe whose writer has not written yet: wait, within the deadline
                import select  # only a pipe waits: a run reading its files never loads it
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([handle], [], [], left)[0]:
                    raise OSError(errno.ETIMEDOUT, f"its writer sent no end within {seconds:g} s") from None
                continue
            if not chunk:  # the end: of the file, or of the pipe (its writer closed, or there is none)
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(handle)


def on_disk(*paths: str) -> None:
    """Files a library opens itself (ssl's PEM files): each must be a file on disk. OSError
    naming the one that is a folder, or a pipe or device (ssl would wait on a FIFO forever)."""
    for path in paths:
        mode = os.stat(path).st_mode  # FileNotFoundError, as ssl's own open would say
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, f"a folder, not a file: {path[:80]}", path)
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, f"a pipe or a device, not a file on disk: {path[:80]}", path)


def open_to_write(path: str, *, append: bool = False) -> TextIO:
    """The file, opened for writing text (emptied first unless `append`); a pipe only if a
    program reads it (else ENXIO, said as "a pipe no one reads")."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK | (os.O_APPEND if append else os.O_TRUNC)
    try:
        handle = os.open(path, flags, 0o666)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise OSError(errno.ENXIO, "a pipe no one reads", path) from None
        raise
    os.set_blocking(handle, True)  # opened: from here on it is written as any file is
    return os.fdopen(handle, "a" if append else "w", encoding="utf-8")
