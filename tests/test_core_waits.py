"""tests/core_waits.py takes off a measured time what a loaded machine added: time a thread was
ready to run and no core was free, never time it ran or slept. Both sides are held here, on this
machine's own scheduler: the tests that lean on it would pass falsely if it took off too much."""
import os
import subprocess
import sys
import threading
import time

import pytest

from core_waits import TASKS, CoreWaits

needs_schedstat = pytest.mark.skipif(not os.path.exists(f"{TASKS}/{threading.get_native_id()}/schedstat"),
                                     reason="this kernel keeps no per-thread schedstat: nothing is taken off here")


@needs_schedstat
@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no sched_setaffinity to share one core")
def test_a_thread_sharing_its_one_core_with_two_busy_processes_is_counted_waiting_two_thirds_of_the_time():
    core, before = min(os.sched_getaffinity(0)), os.sched_getaffinity(0)
    busy = [subprocess.Popen([sys.executable, "-c", "import time\nend = time.monotonic() + 5\n"
                              "while time.monotonic() < end: pass"]) for _ in range(2)]
    try:
        for process in busy:
            os.sched_setaffinity(process.pid, {core})
        os.sched_setaffinity(0, {core})  # this thread alone (Linux: 0 is the calling thread)
        ran = time.thread_time()
        with CoreWaits() as waits:
            end = time.monotonic() + 0.6
            while time.monotonic() < end:  # on the core, or ready for it while another process has it
                pass
        ran = time.thread_time() - ran
    finally:
        os.sched_setaffinity(0, before)
        for process in busy:
            process.kill()
            process.wait(10)
    assert waits.seconds > ran, f"{waits.seconds:.3f} s counted waiting, {ran:.3f} s on the core: a third of it at most"
    assert abs(waits.seconds + ran - 0.6) < 0.1, f"waiting {waits.seconds:.3f} s + on the core {ran:.3f} s, of 0.6 s"


@needs_schedstat
def test_a_thread_asleep_on_a_clock_or_a_lock_is_not_counted_as_waiting():
    held = threading.Lock()
    held.acquire()
    threading.Timer(0.3, held.release).start()
    with CoreWaits() as waits:
        time.sleep(0.3)
        held.acquire(timeout=5)  # asleep on the lock until the timer's thread lets it go
    assert waits.seconds < 0.15, f"{waits.seconds:.3f} s counted waiting of about 0.3-0.6 s asleep"
