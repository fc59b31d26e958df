"""Our --push webhook (peers/support/calling/webhook.py) listens on 127.0.0.1 while a task is
followed: any program on the machine can reach it, token or not. One that sends a request
and hangs up at once (a reset, not a close) must be counted and forgotten like any forged
push, never print a Python traceback into the support agent's own output: here a peer of
the test's own, taking --push, resets twenty connections to our webhook (half with a wrong
token, half with the right one), then pushes the task's completion properly.

A hostile round's finding: the peer is a server of the test's own on 127.0.0.1, port 0; its
attack runs in one thread with a bounded number of connections, each with a timeout."""
import json
import socket
import struct
import threading
import time

from conftest import OutsidePeer, cli, outside_peer

CARD = {"name": "resetter", "description": "d", "version": "1",
        "supportedInterfaces": [{"url": "BASE/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"pushNotifications": True}, "defaultInputModes": ["application/json"],
        "defaultOutputModes": ["text/plain"], "skills": [{"id": "process_refund", "name": "r", "description": "d",
                                                          "tags": []}]}
RESETS = 20


def post(port, token, body, reset):
    with socket.create_connection(("127.0.0.1", port), timeout=2) as connection:
        connection.sendall(b"POST /a2a-push HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A2A-Notification-Token: " + token.encode()
                           + b"\r\nContent-Type: application/a2a+json\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        if reset:  # SO_LINGER 0: close() sends a reset, as a crashed or hostile client's stack does
            connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        else:
            connection.recv(1024)


def attack(config):
    port = int(config["url"].split(":")[2].split("/")[0])
    time.sleep(0.2)
    working = json.dumps({"statusUpdate": {"taskId": "t-1", "contextId": "c-1",
                                           "status": {"state": "TASK_STATE_WORKING"}}}).encode()
    for n in range(RESETS):
        post(port, config["token"] if n % 2 else "not-the-token", working, reset=True)
    done = json.dumps({"statusUpdate": {"taskId": "t-1", "contextId": "c-1", "status": {
        "state": "TASK_STATE_COMPLETED", "message": {"messageId": "m-1", "role": "ROLE_AGENT",
                                                     "parts": [{"text": "refund issued"}]}}}}).encode()
    post(port, config["token"], done, reset=False)


class ResettingPeer(OutsidePeer):
    def do_GET(self):
        self.send(200, json.dumps(CARD).replace("BASE", f"http://127.0.0.1:{self.server.server_port}").encode())

    def do_POST(self):
        asked = self.asked()
        if asked.get("method") == "SendMessage":
            config = asked["params"]["configuration"]["taskPushNotificationConfig"]
            threading.Thread(target=attack, args=(config,), daemon=True).start()
            self.reply({"jsonrpc": "2.0", "id": asked["id"], "result": {"task": {
                "id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_SUBMITTED"}}}})
        else:
            self.reply({"jsonrpc": "2.0", "id": asked["id"], "result": {
                "id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_WORKING"}}})


def test_connections_reset_at_our_webhook_print_no_traceback(tmp_path):
    registry = tmp_path / "registry.json"
    registry.write_text('{"peers": []}')
    with outside_peer(ResettingPeer) as base:
        done = cli("--peer", base, "--registry", str(registry),
                   "--allow-untrusted", "resetter", "--push", "--timeout", "5", "--quiet")
    assert "Traceback" not in done.stdout + done.stderr, done.stderr[-1500:]
    assert "Exception occurred during processing" not in done.stderr, done.stderr[-1500:]
