"""An HTTP+JSON request a client sends as plain `application/json` (not the binding's own
`application/a2a+json`) is printed by the proxy as the HTTP+JSON request it is: its verb and
path before its body, its answer's status before the answer, as when the client speaks the
binding's media type; a JSON-RPC frame in the same media type is still its bytes alone."""
import json

import pytest

from proxy_helpers import TOKEN, billing_served, proxy_to
from transports.base import ClientRequest
from transports.network import HttpTransport

SEND = json.dumps({"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hello"}]}}).encode()


@pytest.mark.parametrize("media_type", ["application/json", "application/a2a+json", "application/json; charset=utf-8"])
def test_an_http_json_request_is_printed_with_its_verb_and_path_whatever_its_media_type(media_type):
    headers = {"Authorization": f"Bearer {TOKEN}", "A2A-Version": "1.0", "Content-Type": media_type}
    with billing_served() as agent, proxy_to(agent) as (proxy, lines):
        client = HttpTransport(timeout=5)
        sent = client.post(proxy + "/a2a/message:send", SEND, headers)
        asked = client.exchange(ClientRequest("GET", proxy + "/a2a/tasks/no-such", {**headers, "Accept": media_type}))
        rpc = client.post(proxy + "/a2a", b'{"jsonrpc": "2.0", "id": 3, "method": "GetTask", "params": {"id": "x"}}',
                          headers)
        client.close()
    said = lines.text().splitlines()
    assert sent.status == 400 and asked.status == 404 and rpc.status == 200  # a message billing cannot act on
    assert f'[#1 client -> agent] --> POST /a2a/message:send {SEND.decode()}' in said
    assert any(line.startswith("[#1 agent -> client] <-- 400 {") for line in said), said
    assert "[#2 client -> agent] --> GET /a2a/tasks/no-such" in said
    assert any(line.startswith("[#2 agent -> client] <-- 404 {") for line in said), said
    assert '[#3 client -> agent] --> {"jsonrpc": "2.0", "id": 3, "method": "GetTask", "params": {"id": "x"}}' in said
