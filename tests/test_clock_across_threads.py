"""The served clock (peers/stamps.py utc_now) and the server's Date (http11_server) each
write a second out once and keep it for the next caller (transports/seconds.py): a thread
that reads that kept second must use the one it judged, not whatever another thread kept since.

A thread switch is made to happen at the one place it hurts, the line of the shared clock
that hands the kept second back, by a line trace that runs the other caller, on its own
thread, there: the same interleaving the interpreter may choose at any time, made every time."""
import inspect
import sys
import threading
import time

from peers import stamps
from transports import http11_server
from transports.seconds import written_once_a_second

SHARED = written_once_a_second(str)  # its inner clock's code is every such clock's


def _switching_at_the_last_return(function, monkeypatch, first, second):
    """`function()` called at `first` (time.time), and, when the shared clock it reads reaches its
    last `return`, `function()` once on another thread at `second`: what each returned."""
    lines, start = inspect.getsourcelines(SHARED)
    last_return = start + max(i for i, line in enumerate(lines) if line.strip().startswith("return"))
    caller = threading.current_thread()  # its clock reads `first`; the other's, `second`: by thread, not by turn,
    monkeypatch.setattr(time, "time", lambda: first if threading.current_thread() is caller else second)  # so that
    # a thread left running by an earlier test, reading the clock meanwhile, takes no moment meant for these two
    other: list[str] = []

    def trace(frame, event, arg):
        if frame.f_code is not SHARED.__code__:
            return None
        if event == "line" and frame.f_lineno == last_return and not other:
            thread = threading.Thread(target=lambda: other.append(function()))
            thread.start()
            thread.join(5)
        return trace
    sys.settrace(trace)
    try:
        mine = function()
    finally:
        sys.settrace(None)
    assert other, "the other caller never ran"
    return mine, other[0]


def test_a_stamp_keeps_its_own_second_when_another_thread_starts_the_next(monkeypatch):
    monkeypatch.setattr(time, "time", lambda: 1_700_000_000.25)
    assert stamps.utc_now() == "2023-11-14T22:13:20.250Z"  # the second 22:13:20 kept
    mine, other = _switching_at_the_last_return(stamps.utc_now, monkeypatch, 1_700_000_000.875, 1_700_000_001.125)
    assert other == "2023-11-14T22:13:21.125Z"
    assert mine == "2023-11-14T22:13:20.875Z"  # not 22:13:21.875: a second ahead, later than stamps after it


def test_a_stamp_keeps_its_own_second_when_a_late_thread_writes_the_one_before(monkeypatch):
    monkeypatch.setattr(time, "time", lambda: 1_700_000_000.25)
    assert stamps.utc_now() == "2023-11-14T22:13:20.250Z"
    # Mine starts the next second; the other, its clock read a moment before, keeps 22:13:20 again
    # (it is the kept second's thread that lost the race): mine must still say 22:13:21.
    mine, other = _switching_at_the_last_return(stamps.utc_now, monkeypatch, 1_700_000_001.125, 1_700_000_000.875)
    assert mine == "2023-11-14T22:13:21.125Z"  # not 22:13:20.125: a second back, before the stamp it follows
    assert other == "2023-11-14T22:13:20.875Z"


def test_a_date_is_the_second_its_answer_was_written_in_whatever_another_thread_writes(monkeypatch):
    monkeypatch.setattr(time, "time", lambda: 1_700_000_000.25)
    assert http11_server._date() == "Tue, 14 Nov 2023 22:13:20 GMT"
    for first, second, mine_in in [(1_700_000_000.875, 1_700_000_001.125, "22:13:20"),
                                   (1_700_000_001.125, 1_700_000_000.875, "22:13:21")]:
        mine, other = _switching_at_the_last_return(http11_server._date, monkeypatch, first, second)
        assert mine == f"Tue, 14 Nov 2023 {mine_in} GMT", (first, second, mine, other)
