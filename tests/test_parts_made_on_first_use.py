"""A peer's parts the essay's run never meets (streams, webhooks, ListTasks's cursors) are
made on first use (peers/on_first_use.py): once, whichever thread asks first, and the one
made is the one every later caller gets. test_layout checks their code is not loaded by
the default run; these check that making them late loses nothing."""
import threading
import time

from peers.billing import billing_agent
from peers.doubles import CutStreams
from peers.on_first_use import made_on_first_use


class Slowly:
    """A part that takes a while to make: a race between first callers has time to happen."""

    made = 0

    @made_on_first_use
    def part(self) -> object:
        Slowly.made += 1
        time.sleep(0.02)
        return object()


def test_threads_racing_for_a_first_part_all_get_the_one_made():
    holder, seen, start = Slowly(), [], threading.Barrier(16)

    def ask() -> None:
        start.wait(timeout=5)
        seen.append(holder.part)
    threads = [threading.Thread(target=ask) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=5)
    assert Slowly.made == 1, "made once, not once per racing thread"
    assert len(seen) == 16 and all(part is seen[0] for part in seen)
    assert holder.part is seen[0] and vars(holder)["part"] is seen[0], "then a plain attribute"


def test_a_peer_makes_its_parts_when_asked_and_keeps_what_it_was_given():
    peer = billing_agent()
    assert not {"streams", "webhooks", "pages"} & set(vars(peer)), "nothing made before it is used"
    webhooks = peer.webhooks
    assert peer.webhooks is webhooks and webhooks.changes is peer.changes, "made on the peer's own feed"
    assert peer.pages is peer.pages and peer.streams is peer.streams
    given = CutStreams(2)
    assert billing_agent(streams=given).streams is given, "a part given is the part used"
