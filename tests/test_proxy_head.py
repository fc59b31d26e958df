"""HEAD through the proxy goes to the agent as HEAD (RFC 9110 9.3.2), never as a GET the agent
would act on, and comes back as the agent's status and headers with no body: a HEAD and a GET
sent back to back on one connection, so a body byte after the HEAD's head would show up where
the GET's status line must begin. The printed frame says HEAD. Raw frames on 127.0.0.1."""
import socket
import time

from proxy_helpers import TOKEN, billing_served, proxy_to
from test_proxy_hostile import raw_agent

CARD = "/.well-known/agent-card.json"
AUTH = f"Authorization: Bearer {TOKEN}\r\nA2A-Version: 1.0\r\n"


def heads(base, *requests):
    """Send each (verb, path) on one connection; each answer's (status, headers), and the bytes left."""
    with socket.create_connection(("127.0.0.1", int(base.rsplit(":", 1)[1])), timeout=5) as sock:
        for verb, path in requests:
            sock.sendall(f"{verb} {path} HTTP/1.1\r\nHost: {base.split('//')[1]}\r\n{AUTH}\r\n".encode())
        got, answers, deadline = b"", [], time.monotonic() + 5
        while len(answers) < len(requests) and time.monotonic() < deadline:
            got += sock.recv(65536)
            while b"\r\n\r\n" in got and len(answers) < len(requests):
                head, _, got = got.partition(b"\r\n\r\n")
                status, *lines = head.decode("latin-1").split("\r\n")
                fields = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)}
                answers.append((int(status.split(" ")[1]), fields))
                if requests[len(answers) - 1][0] == "GET":  # the GET's body: read it whole, before what follows
                    length = int(fields["content-length"])
                    while len(got) < length:
                        got += sock.recv(65536)
                    got = got[length:]
    return answers, got


def test_a_head_reaches_the_agent_as_head_and_its_answer_has_no_body():
    log = []
    with billing_served(log=log) as agent, proxy_to(agent) as (proxy, lines):
        direct, _ = heads(agent, ("HEAD", "/a2a/tasks/no-such"))
        answers, left = heads(proxy, ("HEAD", CARD), ("HEAD", "/a2a/tasks/no-such"), ("GET", CARD))
    verbs = [line.split('"')[1].split(" ")[0] for line in log]  # as the agent's server read them off the wire
    assert verbs == ["HEAD", "HEAD", "HEAD", "GET"], log  # the direct one, then the proxy's
    (card, card_fields), (missing, missing_fields), (got, got_fields) = answers
    assert (card, missing, got, left) == (200, 404, 200, b""), "no body after either HEAD's head"
    assert "content-length" not in card_fields, "the card the proxy serves is rewritten: its GET says the length"
    assert card_fields["content-type"] == got_fields["content-type"] == "application/json"
    drop = ("date", "connection")
    assert {k: v for k, v in missing_fields.items() if k not in drop} == {"via": f"1.1 {lines.app.pseudonym}", **{
        k: v for k, v in direct[0][1].items() if k not in drop}}, "the agent's own head, its length included, and Via"
    said = lines.text()
    assert said.count(f"[#1 client -> agent] --> HEAD {CARD}") == 1 and said.count("[#2 client -> agent] --> HEAD /a2a/tasks/no-such") == 1
    assert said.count("[#2 agent -> client] <-- 404 (headers only)") == 1 and "--> GET /a2a/tasks/no-such" not in said


def test_an_agent_that_sends_a_body_after_a_heads_head_gets_no_byte_of_it_to_the_client():
    def script(sock, stop):  # a HEAD answered with a body, and a second answer smuggled after it
        sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello"
                     b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
    with raw_agent(script) as agent, proxy_to(agent, timeout=1.0) as (proxy, lines):
        answers, left = heads(proxy, ("HEAD", "/thing"), ("HEAD", "/thing"))
    assert [(status, fields.get("content-length")) for status, fields in answers] == [(200, "5")] * 2
    assert left == b"" and "hello" not in lines.text()


def test_a_fault_that_changes_a_body_says_a_head_has_none():
    with billing_served() as agent, proxy_to(agent, "corrupt:1:name") as (proxy, lines):
        answers, left = heads(proxy, ("HEAD", CARD))
    assert answers[0][0] == 200 and left == b""
    assert "[fault] corrupt:1:name: request 1 is a HEAD, answered with no body: nothing changed" in lines.text()
