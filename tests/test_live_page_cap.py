"""The live page's server when a stranger fills it (issue 30, item 6): the peers' rule holds.

The page is served by transports/server.py, so when it is full a newcomer closes the
connection that has made the least progress (transports/room.py), and an event stream,
being answered, is never closed for room. The stranger here plays on loopback, bounded in
time and size: the cap's worth of dripping request heads and more, opened again at once.
Honest service is a ratio in one run, never a timed assertion.
"""
import json
import urllib.request

import pytest

from attacks import HEAD, Reopening, enough_files, honest_ratio
from peers.support.web import server as web
from test_live_page_server import ask, page, started  # noqa: F401 - page: the fixture, a server in this process


def test_the_caps_worth_of_dripping_heads_reopened_at_once_leave_the_page_and_its_event_streams_served(page):
    if not enough_files(4 * web.MAX_CONNECTIONS + 200):
        pytest.skip("this process may not open enough files for the attack and its server side")
    run_id = started(page, step=True)  # held before its first frame: its event streams stay open
    streams = []
    for _ in range(3):
        request = urllib.request.Request(f"{page['base']}/runs/{run_id}/events",
                                         headers={"X-Workbench-Token": page["token"]})
        streams.append(urllib.request.urlopen(request, timeout=30))
        for raw in streams[-1]:
            if raw.startswith(b"data: ") and json.loads(raw[6:])["type"] == "held":
                break
    attack = Reopening(page["server"].server_address, web.MAX_CONNECTIONS + 8, HEAD)
    with attack:
        answered, asked = honest_ratio(lambda: ask(page, "/lessons")[0] == 200, 30)
        assert ask(page, f"/runs/{run_id}/stop", "POST")[0] == 200
    assert attack.reopened > 0, "the page's server closed the stranger's connections to make room"
    # Before the rule, 0 of them; the 95% target is bench/attacks.py's (the attack from another
    # process). Here it shares one process and two cores with the suite: the bar allows that noise.
    assert answered / asked >= 0.8, f"{answered} of {asked} honest requests answered"
    for stream in streams:  # never closed for room: each still gets the run's end
        ends = [json.loads(raw[6:]) for raw in stream if raw.startswith(b"data: ")]
        assert ends and ends[-1]["type"] == "end"
        stream.close()


def test_event_streams_past_their_share_of_the_pages_workers_are_refused_and_places_come_back_as_they_end(page):
    """Each open event stream holds one of the page's 64 workers (a frozen tab's too, for up
    to an hour): past MOST_STREAMS a new one is a 503, so the page's other requests keep theirs."""
    run_id = started(page, step=True)  # held before its first frame: its streams stay open
    streams = []
    try:
        for _ in range(web.MOST_STREAMS):
            request = urllib.request.Request(f"{page['base']}/runs/{run_id}/events",
                                             headers={"X-Workbench-Token": page["token"]})
            streams.append(urllib.request.urlopen(request, timeout=30))
            streams[-1].readline()  # its first line: the stream is open, its place held
        status, _, said = ask(page, f"/runs/{run_id}/events")
        assert status == 503 and f"{web.MOST_STREAMS} event streams are open already" in json.loads(said)["error"]
        assert ask(page, "/lessons")[0] == 200, "the page's other requests are answered"
    finally:
        ask(page, f"/runs/{run_id}/stop", "POST")
        for stream in streams:  # each gets the run's end, and its place is given back
            assert [json.loads(raw[6:]) for raw in stream if raw.startswith(b"data: ")][-1]["type"] == "end"
            stream.close()
    again = urllib.request.urlopen(urllib.request.Request(f"{page['base']}/runs/{started(page)}/events",
                                                          headers={"X-Workbench-Token": page["token"]}), timeout=30)
    assert again.status == 200, "the places came back"
    again.close()
