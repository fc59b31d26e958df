"""How long threads of this process waited for a core: what a loaded machine adds to a time a
test measures, kept apart from the bound the product promises.

A test asserting such a bound (an answer within 1 s, a run ending within its timeout) failed on
a machine running several suites at once (load 15-27 on 2 cores): a run that takes 0.07 s took
2.3 s, all but 0.1 s of it spent ready to run with no core free. Linux counts that time for each
thread (/proc/self/task/ID/schedstat, its second field, in ns), apart from time on a core and time
asleep on a socket, a lock or a clock. So a test measures `with CoreWaits() as waits:` and asserts
`took - waits.seconds < bound`: on an idle machine that takes off nothing, and under load only
time the code could not have used. A stall of the code's own is never taken off: a loop on a core
is time on it, a wait on a socket or a deadline is time asleep. By default the thread measuring
alone counts (the run a test makes in it); `every_thread` counts the process's threads, for work
handed from thread to thread (a server's loop, then a worker): two waiting at once then count
twice, so only where the threads waiting are those doing the work. A thread that ends within the
span takes its count with it (taken off short: the bound only tighter). Where Linux does not say
(another system), nothing is taken off.
"""
import os
import threading

TASKS = "/proc/self/task"


def waited_per_thread(every_thread: bool = False) -> dict[str, int]:
    """Nanoseconds each thread (this one, or `every_thread`) has spent ready to run but waiting for
    a core, so far; {} where unknown."""
    try:
        threads = os.listdir(TASKS) if every_thread else [str(threading.get_native_id())]
    except OSError:
        return {}
    waits = {}
    for thread in threads:
        try:
            with open(f"{TASKS}/{thread}/schedstat") as stats:
                waits[thread] = int(stats.read().split()[1])
        except (OSError, IndexError, ValueError):  # it ended meanwhile, or the kernel keeps no such count
            continue
    return waits


class CoreWaits:
    """`with CoreWaits() as waits:` ...; then `waits.seconds`: the time the thread (or threads) waited
    for a core. A thread begun meanwhile counts whole; a thread id used again, from its new start."""

    seconds = 0.0

    def __init__(self, every_thread: bool = False) -> None:
        self.every_thread = every_thread

    def __enter__(self) -> "CoreWaits":
        self.before = waited_per_thread(self.every_thread)
        return self

    def __exit__(self, *exc) -> None:
        before, after = self.before, waited_per_thread(self.every_thread)
        self.seconds = sum(now - before.get(thread, 0) if now >= before.get(thread, 0) else now
                           for thread, now in after.items()) / 1e9
