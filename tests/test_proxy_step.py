"""proxy --step (issue 34, item 5): each request is held before it reaches the agent, and each
whole answer before it goes back, until Enter, as the workbench's --step holds a frame; q or
end of input stops the holding, not the proxy; with no terminal to press Enter on, it says so
in one line and holds nothing. Real frames through the proxy to the real billing app."""
import queue
import threading

from proxy_helpers import billing_served, proxy_to
from test_proxy_faults import HEADERS, refund
from transports.network import HttpTransport


class Keyboard:
    """--step's answers, one at a time, given by the test; each prompt is counted as it is asked."""

    def __init__(self):
        self.answers, self.asked = queue.Queue(), queue.Queue()

    def read(self, prompt):
        self.asked.put(prompt)
        return self.answers.get(timeout=5)


def test_a_request_reaches_the_agent_only_after_enter_and_its_answer_only_after_another():
    seen, keys, answers = [], Keyboard(), []
    with billing_served(seen=seen) as agent, proxy_to(agent, read=keys.read) as (proxy, lines):
        client = threading.Thread(target=lambda: answers.append(
            HttpTransport(timeout=10).post(proxy + "/a2a", refund(1), HEADERS)))
        client.start()
        assert "Enter sends it" in keys.asked.get(timeout=5)
        assert seen == [] and "[#1 client -> agent] --> " in lines.text()  # shown, and held
        keys.answers.put("")
        keys.asked.get(timeout=5)  # the answer, held in turn
        assert len(seen) == 1 and answers == []
        keys.answers.put("")
        client.join(5)
    assert answers[0].status == 200


def test_q_stops_the_holding_and_the_proxy_forwards_on():
    keys = Keyboard()
    keys.answers.put("q")
    with billing_served() as agent, proxy_to(agent, read=keys.read) as (proxy, lines):
        client = HttpTransport(timeout=10)
        assert [client.post(proxy + "/a2a", refund(order), HEADERS).status for order in (1, 2)] == [200, 200]
    assert keys.asked.qsize() == 1
    assert "[step] q or end of input: frames are no longer held" in lines.text()


def test_a_terminal_that_hangs_up_ends_the_holding_as_end_of_input_does():
    """Reading a terminal that hung up raises EIO (OSError): the held request got a 500 ('app
    raised OSError'); now it goes on, as after q or end of input."""
    import errno

    def hung_up(prompt):
        raise OSError(errno.EIO, "Input/output error")
    with billing_served() as agent, proxy_to(agent, read=hung_up) as (proxy, lines):
        client = HttpTransport(timeout=10)
        assert [client.post(proxy + "/a2a", refund(order), HEADERS).status for order in (1, 2)] == [200, 200]
    assert "[step] q or end of input: frames are no longer held" in lines.text() and "500" not in lines.text()


def test_no_terminal_to_press_enter_on_is_one_line_and_nothing_is_held():
    with billing_served() as agent, proxy_to(agent, step=True) as (proxy, lines):  # pytest's stdin is no terminal
        assert HttpTransport(timeout=10).post(proxy + "/a2a", refund(1), HEADERS).status == 200
    assert lines.lines[0] == "[proxy] --step: stdin is not a terminal, so no one can press Enter: frames are not held"
