"""A push config's id and a list of them, as A2A 1.0 says (sections 3.1.7 and 3.1.9): a
config persists until its task ends or it is deleted, so one created with no id is given
one of its own and replaces none; Get and Delete name the config (id is REQUIRED in 1.0;
0.3's pushNotificationConfigId is optional: the task's own id then); a list honours
pageSize and pageToken and refuses either when it is not one. Real frames, both bindings."""
import json

import pytest

from peers import billing
from peers.a2a import wire_v03, wire_v10
from peers.app import PeerApp
from transports.base import request
from transports.inprocess import InProcessTransport

HEADERS = {"Content-Type": "application/json", "Authorization": "Bearer t0k", "A2A-Version": "1.0"}
HOOK = "https://hooks.example/a2a"


class Served:
    """billing, pushes allowed to any address, called over JSON-RPC or its REST routes."""

    def __init__(self, wire=wire_v10):
        self.app = PeerApp(billing.billing_agent(allow_private_webhooks=True), wire, token="t0k")
        self.transport = InProcessTransport({billing.BASE_URL: self.app})
        self.headers = HEADERS if wire is wire_v10 else {k: v for k, v in HEADERS.items() if k != "A2A-Version"}

    def call(self, method, params):
        frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
        return json.loads(self.transport.post(billing.BASE_URL + "/a2a", frame, self.headers).body)

    def rest(self, method, path, body=None):
        answer = self.app(request(method, billing.BASE_URL + "/a2a" + path, self.headers,
                                  b"" if body is None else json.dumps(body).encode()))
        return answer.status, json.loads(answer.body) if answer.body else None

    def paused_task(self, message_id="m-1"):
        """A refund above billing's limit: paused, so configs can be set on it."""
        parts = [{"data": {"order_id": "ORD-1", "amount": 6000}}]
        if self.headers is HEADERS:
            return self.call("SendMessage", {"message": {"messageId": message_id, "role": "ROLE_USER",
                                                         "parts": parts}})["result"]["task"]["id"]
        return self.call("message/send", {"message": {"kind": "message", "messageId": message_id, "role": "user",
                                                      "parts": [{"kind": "data", **parts[0]}]}})["result"]["id"]


def test_configs_created_with_no_id_are_each_kept_under_an_id_of_their_own_and_replace_none():
    served = Served()
    task = served.paused_task()
    made = [served.call("CreateTaskPushNotificationConfig", {"taskId": task, "url": f"{HOOK}/{n}"})["result"]
            for n in range(3)]
    assert [config["id"] for config in made] == [task, f"{task}-2", f"{task}-3"]
    listed = served.call("ListTaskPushNotificationConfigs", {"taskId": task})["result"]["configs"]
    assert [config["url"] for config in listed] == [f"{HOOK}/0", f"{HOOK}/1", f"{HOOK}/2"]
    again = served.call("CreateTaskPushNotificationConfig", {"taskId": task, "url": f"{HOOK}/1"})["result"]
    assert again["id"] == f"{task}-2", "the same webhook sent again is the one kept, not a fourth"
    named = served.call("CreateTaskPushNotificationConfig", {"taskId": task, "id": task, "url": f"{HOOK}/9"})["result"]
    assert named["id"] == task and len(served.call("ListTaskPushNotificationConfigs", {"taskId": task})
                                       ["result"]["configs"]) == 3, "an id given replaces the config it names"


def test_over_rest_a_config_posted_with_no_id_replaces_none_either():
    served = Served()
    task = served.paused_task()
    ids = [served.rest("POST", f"/tasks/{task}/pushNotificationConfigs", {"url": f"{HOOK}/{n}"})[1]["id"]
           for n in range(2)]
    assert ids == [task, f"{task}-2"]
    status, listed = served.rest("GET", f"/tasks/{task}/pushNotificationConfigs?pageSize=1")
    assert status == 200 and [c["id"] for c in listed["configs"]] == [task] and listed["nextPageToken"] == f"{task}-2"


def test_0_3_set_with_no_id_replaces_none_and_get_with_no_config_id_is_the_tasks_own():
    served = Served(wire_v03)
    task = served.paused_task()
    for n in range(2):
        served.call("tasks/pushNotificationConfig/set", {"taskId": task, "pushNotificationConfig": {"url": f"{HOOK}/{n}"}})
    listed = served.call("tasks/pushNotificationConfig/list", {"id": task})["result"]
    assert [c["pushNotificationConfig"]["id"] for c in listed] == [task, f"{task}-2"]
    got = served.call("tasks/pushNotificationConfig/get", {"id": task})["result"]
    assert got["pushNotificationConfig"]["url"] == f"{HOOK}/0"


@pytest.mark.parametrize("method", ["GetTaskPushNotificationConfig", "DeleteTaskPushNotificationConfig"])
def test_1_0_get_and_delete_with_no_config_id_are_invalid_params_and_delete_nothing(method):
    served = Served()
    task = served.paused_task()
    served.call("CreateTaskPushNotificationConfig", {"taskId": task, "url": HOOK})
    refused = served.call(method, {"taskId": task})
    assert refused["error"]["code"] == -32602 and "params.id" in refused["error"]["message"]
    assert len(served.call("ListTaskPushNotificationConfigs", {"taskId": task})["result"]["configs"]) == 1


def test_a_list_in_pages_of_one_walks_every_config_once_in_order():
    served = Served()
    task = served.paused_task()
    for n in range(4):
        served.call("CreateTaskPushNotificationConfig", {"taskId": task, "id": f"c{n}", "url": f"{HOOK}/{n}"})
    seen, token = [], ""
    for _ in range(6):  # four pages, then none left
        page = served.call("ListTaskPushNotificationConfigs", {"taskId": task, "pageSize": 1, "pageToken": token})
        seen += [config["id"] for config in page["result"]["configs"]]
        token = page["result"]["nextPageToken"]
        if not token:
            break
    assert seen == ["c0", "c1", "c2", "c3"]
    three = served.call("ListTaskPushNotificationConfigs", {"taskId": task, "pageSize": 3})["result"]
    assert len(three["configs"]) == 3 and three["nextPageToken"] == "c3"
    every = served.call("ListTaskPushNotificationConfigs", {"taskId": task, "pageSize": None, "pageToken": None})
    assert len(every["result"]["configs"]) == 4 and every["result"]["nextPageToken"] == ""


def test_a_config_id_given_as_the_empty_string_is_none_given_and_the_peer_names_it():
    """Proto3 reads "" as unset: an omitted id is named by the peer, and "" was refused as too short."""
    served = Served()
    task = served.paused_task()
    named = served.call("CreateTaskPushNotificationConfig", {"taskId": task, "id": "", "url": HOOK})["result"]
    assert named["id"] == task and named["url"] == HOOK


@pytest.mark.parametrize("size", [0, 101, 10 ** 6])
def test_a_list_page_size_is_the_most_to_return_and_0_is_unset(size):
    """The proto's page_size here is a plain int32, "if unspecified, all configs will be returned":
    0 (proto3's unset) and 101 were refused as if this were ListTasks's 1 to 100."""
    served = Served()
    task = served.paused_task()
    for n in range(3):
        served.call("CreateTaskPushNotificationConfig", {"taskId": task, "id": f"c{n}", "url": f"{HOOK}/{n}"})
    listed = served.call("ListTaskPushNotificationConfigs", {"taskId": task, "pageSize": size})["result"]
    assert [config["id"] for config in listed["configs"]] == ["c0", "c1", "c2"] and listed["nextPageToken"] == ""


@pytest.mark.parametrize("asked", [{"pageSize": -5}, {"pageSize": "1x"},
                                   {"pageSize": 1.5}, {"pageSize": True}, {"pageToken": "garbage"},
                                   {"pageToken": 7}, {"pageToken": ["c0"]}, {"pageToken": "x" * 5000}])
def test_a_list_with_a_page_size_or_token_that_is_none_is_invalid_params(asked):
    served = Served()
    task = served.paused_task()
    served.call("CreateTaskPushNotificationConfig", {"taskId": task, "id": "c0", "url": HOOK})
    refused = served.call("ListTaskPushNotificationConfigs", {"taskId": task, **asked})
    assert refused["error"]["code"] == -32602, refused
    assert next(iter(asked)) in refused["error"]["message"]


def test_an_id_freed_is_not_given_again_while_one_after_it_is_kept_so_a_walk_skips_none():
    served = Served()
    task = served.paused_task()
    for n in range(5):
        served.call("CreateTaskPushNotificationConfig", {"taskId": task, "url": f"{HOOK}/{n}"})
    page = served.call("ListTaskPushNotificationConfigs", {"taskId": task, "pageSize": 2})["result"]
    assert [c["id"] for c in page["configs"]] == [task, f"{task}-2"] and page["nextPageToken"] == f"{task}-3"
    served.call("DeleteTaskPushNotificationConfig", {"taskId": task, "id": f"{task}-2"})
    again = served.call("CreateTaskPushNotificationConfig", {"taskId": task, "url": f"{HOOK}/again"})["result"]
    assert again["id"] == f"{task}-6", "not -2, freed while -3 to -5 are kept"
    rest = served.call("ListTaskPushNotificationConfigs", {"taskId": task, "pageToken": page["nextPageToken"]})
    assert [c["id"] for c in rest["result"]["configs"]] == [f"{task}-3", f"{task}-4", f"{task}-5", f"{task}-6"]
    served.call("DeleteTaskPushNotificationConfig", {"taskId": task, "id": f"{task}-3"})
    gone = served.call("ListTaskPushNotificationConfigs", {"taskId": task, "pageToken": f"{task}-3"})
    assert gone["error"]["code"] == -32602 and "deleted since: list again from the start" in gone["error"]["message"]


@pytest.mark.parametrize("named, after", [("-\u00b2", 2), ("-x", 2), ("-07", 8), ("-999999999", 1_000_000_000),
                                          ("-" + "9" * 40, 10 ** 40)])
def test_a_config_named_like_a_numbered_one_is_counted_and_no_unnamed_one_replaces_another(named, after):
    served = Served()
    task = served.paused_task()
    served.call("CreateTaskPushNotificationConfig", {"taskId": task, "url": f"{HOOK}/0"})
    served.call("CreateTaskPushNotificationConfig", {"taskId": task, "id": task + named, "url": f"{HOOK}/1"})
    made = [served.call("CreateTaskPushNotificationConfig", {"taskId": task, "url": f"{HOOK}/{n}"})["result"]["id"]
            for n in (2, 3)]
    assert made == [f"{task}-{after}", f"{task}-{after + 1}"], "each a new id: none replaced"
    assert len(served.call("ListTaskPushNotificationConfigs", {"taskId": task})["result"]["configs"]) == 4


def test_an_unnamed_config_after_one_numbered_at_the_longest_an_id_may_be_takes_a_free_number_it_can_be_read_by():
    served = Served()
    task = served.paused_task()
    longest = f"{task}-" + "9" * (2048 - len(task) - 1)
    served.call("CreateTaskPushNotificationConfig", {"taskId": task, "id": longest, "url": f"{HOOK}/0"})
    made = served.call("CreateTaskPushNotificationConfig", {"taskId": task, "url": f"{HOOK}/1"})["result"]["id"]
    assert made == f"{task}-2", made
    assert served.call("GetTaskPushNotificationConfig", {"taskId": task, "id": made})["result"]["url"] == f"{HOOK}/1"
