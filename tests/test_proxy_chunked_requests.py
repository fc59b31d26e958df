"""A request body a client sends chunked reaches the agent through the proxy whole, with a
Content-Length (the proxy has it whole once our server has read it): the agent is handed the
same bytes as from a client that sent a Content-Length, the frame is printed as any other,
and a chunked body past the limit is refused by the proxy's server, the agent never asked."""
import json
import socket

from proxy_helpers import TOKEN, billing_served, proxy_to

ASK = json.dumps({"jsonrpc": "2.0", "id": 9, "method": "GetTask", "params": {"id": "no-such"}}).encode()


def raw(base, head, body):
    """One request as raw bytes to `base` (Connection: close); what came back, read to the close."""
    with socket.create_connection(("127.0.0.1", int(base.rsplit(":", 1)[1])), timeout=5) as sock:
        sock.sendall(b"POST /a2a HTTP/1.1\r\nHost: " + base.split("//")[1].encode() + b"\r\nConnection: close\r\nContent-Type: application/json\r\n"
                     b"A2A-Version: 1.0\r\nAuthorization: Bearer " + TOKEN.encode() + b"\r\n" + head + b"\r\n" + body)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


def test_a_chunked_request_reaches_the_agent_whole_with_a_content_length():
    seen = []
    chunked = b"".join(b"%x\r\n%s\r\n" % (len(ASK[at:at + 5]), ASK[at:at + 5]) for at in range(0, len(ASK), 5))
    with billing_served(seen=seen) as agent, proxy_to(agent) as (proxy, lines):
        plain = raw(proxy, b"Content-Length: %d\r\n" % len(ASK), ASK)
        split = raw(proxy, b"Transfer-Encoding: chunked\r\n", chunked + b"0\r\nX-Trailer: 1\r\n\r\n")
    assert plain.split(b"\r\n\r\n", 1)[1] == split.split(b"\r\n\r\n", 1)[1] and b"no-such" in split
    assert [request.body for request in seen] == [ASK, ASK]
    assert seen[1].headers["content-length"] == str(len(ASK)) and "transfer-encoding" not in seen[1].headers
    assert {k: v for k, v in seen[0].headers.items() if k != "host"} == \
        {k: v for k, v in seen[1].headers.items() if k != "host"}, "the agent cannot tell them apart"
    for number in (1, 2):  # each request's lines carry its number
        assert lines.text().count(f'[#{number} client -> agent] --> {{"jsonrpc": "2.0", "id": 9, "method": "GetTask"') == 1


def test_a_chunked_body_past_the_limit_is_refused_and_the_agent_never_asked():
    seen = []
    with billing_served(seen=seen) as agent, proxy_to(agent) as (proxy, lines):
        answer = raw(proxy, b"Transfer-Encoding: chunked\r\n", b"100001\r\n" + b"x" * 1000)
    assert answer.startswith(b"HTTP/1.1 413 ") and seen == []
    assert sum("413 refused: body larger than" in line for line in lines.lines) == 1
