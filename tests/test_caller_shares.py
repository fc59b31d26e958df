"""Per-caller shares (issue 30, items 7 and 8): one caller cannot take what the store or
push delivery keeps for every caller.

Each test plays the attacker, a token holder, over real frames on 127.0.0.1 (port 0),
bounded in time and size; where it measures honest service, as a ratio in one run.
"""
import json
import socket
import threading
import time

from conftest import serving
from peers import billing
from peers.a2a import wire_v10
from peers.app import PeerApp
from transports.network import HttpTransport


def headers(token):
    return {"Content-Type": "application/json", "Authorization": f"Bearer {token}", "A2A-Version": "1.0"}


def call(base, token, method, params):
    transport = HttpTransport(timeout=10)
    try:
        frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
        return json.loads(transport.post(f"{base}/a2a", frame, headers(token)).body)
    finally:
        transport.close()


def refund(message_id, order, amount, **configuration):
    return {"message": {"messageId": message_id, "role": "ROLE_USER", "parts": [
        {"data": {"order_id": order, "amount": amount}}]}, **({"configuration": configuration} if configuration else {})}


def test_one_caller_filling_the_task_store_forgets_its_own_tasks_not_another_callers():
    peer = billing.billing_agent(max_tasks=60)
    with serving(PeerApp(peer, wire_v10, token="alice")) as alice, serving(PeerApp(peer, wire_v10, token="bob")) as bob:
        bobs = [call(bob.base_url, "bob", "SendMessage", refund(f"b-{n}", f"ORD-B{n}", 5))["result"]["task"]["id"]
                for n in range(5)]
        alices = [call(alice.base_url, "alice", "SendMessage", refund(f"a-{n}", f"ORD-A{n}", 5))["result"]["task"]["id"]
                  for n in range(80)]  # more than the whole store holds
        for task_id in bobs:
            assert call(bob.base_url, "bob", "GetTask", {"id": task_id})["result"]["id"] == task_id
        kept = [task_id for task_id in alices if "result" in call(alice.base_url, "alice", "GetTask", {"id": task_id})]
        assert kept == alices[-55:], "alice's own oldest made room: the store holds 60, bob's 5 among them"
        assert call(alice.base_url, "alice", "GetTask", {"id": alices[0]})["error"]["code"] == -32001
