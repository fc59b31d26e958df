"""What the official conformance kit (a2a-tck) checks that the workbench's own tests did
not: ListTasks' order, filter and artifact rules (A2A 1.0 section 3.1.4). Real frames
through the real billing app."""
import itertools
import json

import pytest

from peers import billing
from peers.a2a import wire_v10
from peers.a2a.fields import instant
from peers import conformance
from peers.a2a.stream import fold
from peers.app import PeerApp
from peers.conformance import conformance_agent
from transports import sse
from transports.inprocess import InProcessTransport

HEADERS = {"Content-Type": "application/json", "Authorization": "Bearer t0k", "A2A-Version": "1.0"}
JSON_AUTH = {"Content-Type": "application/json", "Authorization": "Bearer t0k"}  # no version asked: 0.3, or the essay's


def peer_with_clock():
    """billing with a clock that ticks a second per reading, so every state change is later."""
    seconds = itertools.count()

    def clock():
        second = next(seconds)
        return f"2026-11-30T{12 + second // 3600:02d}:{second // 60 % 60:02d}:{second % 60:02d}.5Z"
    transport = InProcessTransport({billing.BASE_URL: PeerApp(billing.billing_agent(clock=clock), wire_v10, token="t0k")})

    def call(method, params):
        frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
        return json.loads(transport.post(billing.BASE_URL + "/a2a", frame, HEADERS).body)
    return call


def send(call, message_id, order, context="ctx"):
    return call("SendMessage", {"message": {"messageId": message_id, "role": "ROLE_USER", "contextId": context,
                                            "parts": [{"data": {"order_id": order, "amount": 5}}]}})["result"]["task"]


def test_list_tasks_puts_the_most_recently_updated_first_and_leaves_artifacts_out_unless_asked():
    call = peer_with_clock()
    paused = call("SendMessage", {"message": {"messageId": "m-p", "role": "ROLE_USER", "contextId": "ctx", "parts": [
        {"data": {"order_id": "ORD-P", "amount": 6000}}]}})["result"]["task"]["id"]  # made first ...
    made = [send(call, f"m-{n}", f"ORD-{n}")["id"] for n in range(3)]
    call("SendMessage", {"message": {"messageId": "m-a", "role": "ROLE_USER", "taskId": paused, "parts": [
        {"data": {"approval": {"order_id": "ORD-P", "amount": 6000.0, "currency": "USD"}}}]}})  # ... updated last
    listed = call("ListTasks", {"contextId": "ctx"})["result"]
    assert [t["id"] for t in listed["tasks"]] == [paused] + made[::-1], "by update, not by creation"
    stamps = [t["status"]["timestamp"] for t in listed["tasks"]]
    assert stamps == sorted(stamps, key=instant, reverse=True)
    assert all("artifacts" not in t for t in listed["tasks"]) and listed["nextPageToken"] == ""
    with_artifacts = call("ListTasks", {"contextId": "ctx", "includeArtifacts": True})["result"]["tasks"]
    assert all(t["artifacts"][0]["parts"][0]["text"].startswith("refund of $") for t in with_artifacts)


def test_list_tasks_filters_by_status_timestamp_after_its_moment_included():
    """a2a.proto: "Only tasks with a status timestamp time greater than or equal to this value"."""
    call = peer_with_clock()
    first = send(call, "m-1", "ORD-1")
    later = send(call, "m-2", "ORD-2")
    stamp = later["status"]["timestamp"]
    after = call("ListTasks", {"statusTimestampAfter": stamp})["result"]["tasks"]
    assert [t["id"] for t in after] == [later["id"]], "its own moment included, the earlier task not"
    whole_second = first["status"]["timestamp"].replace(".5Z", "Z")  # .5 is after :ss, not before
    assert [t["id"] for t in call("ListTasks", {"statusTimestampAfter": whole_second})["result"]["tasks"]] == [
        later["id"], first["id"]]


def test_a_status_timestamp_after_with_an_offset_names_the_same_moment_in_utc():
    """proto JSON's Timestamp: RFC 3339, "offsets other than Z are also accepted"."""
    call = peer_with_clock()
    send(call, "m-1", "ORD-1")
    later = send(call, "m-2", "ORD-2")
    whole, _, fraction = later["status"]["timestamp"].rstrip("Z").partition(".")
    shifted = f"{whole[:11]}{int(whole[11:13]) + 2:02d}{whole[13:]}.{fraction}+02:00"  # the same moment, further east
    after = call("ListTasks", {"statusTimestampAfter": shifted})["result"]["tasks"]
    assert [t["id"] for t in after] == [later["id"]]


def test_an_empty_context_id_is_no_filter_as_a_proto3_strings_default():
    call = peer_with_clock()
    tasks = [send(call, f"m-{n}", f"ORD-{n}") for n in range(2)]
    listed = call("ListTasks", {"contextId": ""})["result"]["tasks"]
    assert sorted(t["id"] for t in listed) == sorted(t["id"] for t in tasks)


@pytest.mark.parametrize("value", ["yesterday", "2026-11-30", "2026-11-30T12:00:00+24:00", "2026-11-30T12:00:00",
                                   "\u0662026-11-30T12:00:00Z", "2026-11-30T12:00:00.1234567890Z", "2026-11-30T12:00:61Z", 5, None, True])
def test_a_status_timestamp_after_that_is_not_a_utc_timestamp_is_invalid_params(value):
    call = peer_with_clock()
    answer = call("ListTasks", {"statusTimestampAfter": value})
    if value is None:
        assert "result" in answer
    else:
        assert answer["error"]["code"] == -32602


@pytest.mark.parametrize("value", [1, "true", None])
def test_include_artifacts_must_be_true_or_false(value):
    answer = peer_with_clock()("ListTasks", {"includeArtifacts": value})
    assert ("result" in answer) if value is None else answer["error"]["code"] == -32602


@pytest.mark.parametrize("text, sortable", [
    ("2026-11-30T12:00:00Z", "2026-11-30T12:00:00.000000000"), ("2026-11-30T12:00:00.5Z", "2026-11-30T12:00:00.500000000"),
    ("2026-11-30T12:00:00.123456789Z", "2026-11-30T12:00:00.123456789"), ("2026-11-30 12:00:00Z", None),
    ("2026-11-30T12:00:00.Z", None), ("2026-1-30T12:00:00Z", None), ("", None), ("Z", None),
    # A leap second is 60 (RFC 3339 5.6), never 61, which strptime takes; a year before 1000 is four digits still
    # with an offset, as without (gmtime's strftime wrote 999, and a valid statusTimestampAfter was refused).
    ("2016-12-31T23:59:60Z", "2016-12-31T23:59:60.000000000"), ("2026-11-30T12:00:61Z", None),
    ("2026-11-30T12:00:61+01:00", None), ("0999-06-01T12:00:00+01:00", "0999-06-01T11:00:00.000000000"),
    ("0001-01-01T01:30:00+01:00", "0001-01-01T00:30:00.000000000"), ("0001-01-01T00:30:00+01:00", None),
    ("9999-12-31T23:30:00-01:00", None), ("9999-12-31T23:30:00+01:00", "9999-12-31T22:30:00.000000000")])
def test_instant_makes_timestamps_sort_as_text_in_time_order(text, sortable):
    assert instant(text) == sortable


# -- the conformance peer: the kit's scripted behaviours, by messageId prefix ---------------

def conformance_call():
    from peers.conformance import conformance_agent
    transport = InProcessTransport({"https://conformance.example": PeerApp(conformance_agent(), wire_v10)})

    def call(method, params):
        frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
        headers = {"Content-Type": "application/json", "A2A-Version": "1.0"}
        return json.loads(transport.post("https://conformance.example/a2a", frame, headers).body)
    return call


def tck_send(call, message_id, text="hi", **fields):
    return call("SendMessage", {"message": {"messageId": message_id, "role": "ROLE_USER",
                                            "parts": [{"text": text}], **fields}})


@pytest.mark.parametrize("message_id, part", [
    ("tck-complete-task-1", {"text": "Hello from TCK"}),
    ("tck-artifact-text-1", {"text": "Generated text content"}),
    ("tck-artifact-file-1", {"raw": "dGNr", "filename": "output.txt", "mediaType": "text/plain"}),
    ("tck-artifact-file-url-1", {"url": "https://example.com/output.txt", "filename": "output.txt",
                                 "mediaType": "text/plain"}),  # the longer prefix wins over tck-artifact-file
    ("tck-artifact-data-1", {"data": {"key": "value", "count": 42}}),
    ("anything-else", {"text": "Hello from TCK"}),
])
def test_the_conformance_peer_completes_with_the_artifact_its_prefix_names(message_id, part):
    task = tck_send(conformance_call(), message_id)["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED" and task["artifacts"][0]["parts"] == [part]


def test_the_conformance_peer_answers_a_message_response_with_a_message_and_no_task():
    call = conformance_call()
    answer = tck_send(call, "tck-message-response-1")["result"]
    assert list(answer) == ["message"] and answer["message"]["parts"] == [{"text": "Direct message response"}]
    assert answer["message"]["role"] == "ROLE_AGENT"
    assert call("ListTasks", {})["result"]["tasks"] == []


def test_the_conformance_peer_asks_for_input_then_the_next_turn_decides_and_it_can_be_canceled():
    call = conformance_call()
    paused = tck_send(call, "tck-input-required-1")["result"]["task"]
    assert paused["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    done = tck_send(call, "tck-artifact-text-2", taskId=paused["id"])["result"]["task"]
    assert (done["id"], done["status"]["state"]) == (paused["id"], "TASK_STATE_COMPLETED")
    assert done["artifacts"][0]["parts"] == [{"text": "Generated text content"}]
    other = tck_send(call, "tck-input-required-2")["result"]["task"]
    assert call("CancelTask", {"id": other["id"]})["result"]["status"]["state"] == "TASK_STATE_CANCELED"


def tck_stream(method, params, transport):
    frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    response = transport.stream("https://conformance.example/a2a", frame,
                                {"Content-Type": "application/json", "A2A-Version": "1.0"})
    return [json.loads(data)["result"] for data in sse.events(response.body)]


def test_the_chunked_scenario_streams_one_artifact_in_two_chunks_that_fold_back_into_one():
    transport = InProcessTransport({"https://conformance.example": PeerApp(conformance_agent(), wire_v10)})
    results = tck_stream("SendStreamingMessage", {"message": {
        "messageId": "tck-stream-artifact-chunked-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}, transport)
    assert [list(result) for result in results] == [["task"], ["statusUpdate"], ["artifactUpdate"],
                                                    ["artifactUpdate"], ["statusUpdate"]]
    first, second = results[2]["artifactUpdate"], results[3]["artifactUpdate"]
    assert first["artifact"]["parts"] == [{"text": "chunk-1 "}] and "append" not in first
    assert second["artifact"]["parts"] == [{"text": "chunk-2"}] and second["append"] and second["lastChunk"]
    assert first["artifact"]["artifactId"] == second["artifact"]["artifactId"]
    task = fold(wire_v10.event_from_result(result) for result in results)
    assert [part.text for part in task.artifacts[0].parts] == ["chunk-1 ", "chunk-2"]


def test_the_resubscribe_scenario_works_then_pauses_and_a_subscriber_sees_it_complete(monkeypatch):
    monkeypatch.setattr(conformance, "RESUBSCRIBE_PAUSE", 0.5)  # the kit's SUT waits 4 s
    transport = InProcessTransport({"https://conformance.example": PeerApp(conformance_agent(), wire_v10)})
    frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
        "messageId": "test-resubscribe-message-id-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]},
        "configuration": {"returnImmediately": True}}}).encode()
    headers = {"Content-Type": "application/json", "A2A-Version": "1.0"}
    task = json.loads(transport.post("https://conformance.example/a2a", frame, headers).body)["result"]["task"]
    watched = tck_stream("SubscribeToTask", {"id": task["id"]}, transport)  # while it works
    assert watched[0]["task"]["status"]["state"] in ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING")
    assert watched[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert not any("artifactUpdate" in result for result in watched), "it completes with no artifact"


def test_the_conformance_peer_rejects_and_refuses_files_of_types_it_does_not_take_and_takes_a_reused_message_id_as_new():
    call = conformance_call()
    assert tck_send(call, "tck-reject-task-1")["result"]["task"]["status"]["state"] == "TASK_STATE_REJECTED"
    files = call("SendMessage", {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [
        {"raw": "dGNr", "mediaType": "application/x-unsupported"}]}})
    assert files["error"]["code"] == -32005
    first, second = (tck_send(call, "tck-complete-task-same", text)["result"]["task"]["id"] for text in ("a", "b"))
    assert first != second, "the kit sends different messages under one messageId: each is new here"


def test_proto_field_names_are_read_as_their_json_names():
    call = peer_with_clock()
    task = send(call, "m-1", "ORD-1", context="ctx-a")
    send(call, "m-2", "ORD-2", context="ctx-b")
    assert [t["id"] for t in call("ListTasks", {"context_id": "ctx-a"})["result"]["tasks"]] == [task["id"]]
    got = call("GetTask", {"id": task["id"], "history_length": 0})["result"]
    assert "history" not in got
    snake = call("SendMessage", {"message": {"message_id": "m-3", "role": "ROLE_USER", "context_id": "ctx-a",
                                             "parts": [{"data": {"order_id": "ORD-3", "amount": 5}}]},
                                 "configuration": {"history_length": 0}})["result"]["task"]
    assert snake["contextId"] == "ctx-a" and "history" not in snake


def test_a_field_given_as_null_is_read_as_absent_as_proto3_json_reads_it():
    """ProtoJSON: null is every field's default. returnImmediately, acceptedOutputModes, a message's
    contextId and referenceTaskIds given as null were refused (-32602), configuration as null was not."""
    call = peer_with_clock()
    sent = call("SendMessage", {"message": {"messageId": "m-1", "role": "ROLE_USER", "contextId": None, "taskId": None,
                                            "referenceTaskIds": None, "extensions": None, "metadata": None,
                                            "parts": [{"data": {"order_id": "ORD-1", "amount": 5}}]},
                                "configuration": {"returnImmediately": None, "acceptedOutputModes": None,
                                                  "historyLength": None, "taskPushNotificationConfig": None},
                                "metadata": None})
    task = sent["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED" and task["contextId"].startswith("context-")
    assert call("GetTask", {"id": task["id"], "historyLength": None})["result"]["history"] == task["history"]
    listed = call("ListTasks", {"contextId": None, "status": None, "pageSize": None, "pageToken": None})["result"]
    assert [t["id"] for t in listed["tasks"]] == [task["id"]]
    assert call("SendMessage", {"message": None})["error"]["code"] == -32602, "a required field is still required"


def test_an_empty_message_id_is_none_given_and_is_refused_as_a_missing_one_is():
    """Proto3 reads "" as a string's default, unset, and messageId is required (spec 5.7): a
    missing one was refused, an empty one made a task."""
    call = peer_with_clock()
    for message_id in ("", None):
        message = {"role": "ROLE_USER", "parts": [{"data": {"order_id": "ORD-1", "amount": 5}}],
                   **({} if message_id is None else {"messageId": message_id})}
        refused = call("SendMessage", {"message": message})["error"]
        assert refused["code"] == -32602 and "messageId" in refused["message"]
        assert call("SendStreamingMessage", {"message": message})["error"]["code"] == -32602
    assert call("ListTasks", {})["result"]["tasks"] == []


def test_enums_by_number_int32s_as_strings_and_url_safe_bytes_are_read_as_protojson_reads_them():
    """Spec 5.5: ProtoJSON. Its parsers take an enum's number as well as its name, an int32 as a
    number or a string, bytes in standard or URL-safe base64, padded or not (the official SDK takes
    each); they were refused with -32602. A bool or a fraction is still no number, 2**31 no int32."""
    call = peer_with_clock()
    task = call("SendMessage", {"message": {"messageId": "m-1", "role": 1, "parts": [
        {"data": {"order_id": "ORD-1", "amount": 5}}]}, "configuration": {"historyLength": "0"}})["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED" and "history" not in task
    assert call("GetTask", {"id": task["id"], "historyLength": 1.0})["result"]["history"][0]["role"] == "ROLE_USER"
    assert [t["id"] for t in call("ListTasks", {"status": 3, "pageSize": "5"})["result"]["tasks"]] == [task["id"]]
    assert call("ListTasks", {"status": 4})["result"]["tasks"] == []
    assert [t["id"] for t in call("ListTasks", {"status": 0})["result"]["tasks"]] == [task["id"]], "0: unset"
    again = call("SendMessage", {"message": {"messageId": "m-3", "role": "1", "parts": [
        {"data": {"order_id": "ORD-3", "amount": 5}}]}})["result"]["task"]  # "1": its number in digits, read so too
    assert again["history"][0]["role"] == "ROLE_USER"
    assert {t["id"] for t in call("ListTasks", {"status": "3"})["result"]["tasks"]} == {task["id"], again["id"]}
    for wrong in ({"role": True}, {"role": 1.0}, {"role": 0}, {"role": " 1"}, {"role": "01x"}):
        message = {"messageId": "m-2", "parts": [{"data": {"order_id": "ORD-2", "amount": 5}}], **wrong}
        assert call("SendMessage", {"message": message})["error"]["code"] == -32602, wrong
    for wrong in ({"status": True}, {"status": 9}, {"status": 3.0}, {"pageSize": "5.0"}, {"historyLength": 2 ** 31}):
        assert call("ListTasks", wrong)["error"]["code"] == -32602, wrong
    files = conformance_call()
    for raw in ("-_8", "YWI", "YWI=", "+/8="):
        sent = files("SendMessage", {"message": {"messageId": f"tck-complete-task-{raw}", "role": "ROLE_USER", "parts": [
            {"raw": raw, "filename": "a.txt", "mediaType": "text/plain"}]}})
        assert sent["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED", (raw, sent)
    assert files("SendMessage", {"message": {"messageId": "tck-complete-task-x", "role": "ROLE_USER", "parts": [
        {"raw": "Y", "filename": "a.txt", "mediaType": "text/plain"}]}})["error"]["code"] == -32602


def test_the_card_says_when_it_was_last_modified_and_how_long_to_keep_it():
    transport = InProcessTransport({billing.BASE_URL: PeerApp(billing.billing_agent(), wire_v10, token="t0k")})
    headers = transport.get(billing.BASE_URL + "/.well-known/agent-card.json", {}).headers
    assert headers["Cache-Control"] == "max-age=300" and headers["ETag"].startswith('"')
    import email.utils
    assert email.utils.parsedate_to_datetime(headers["Last-Modified"]).tzinfo is not None


UNAUTHENTICATED = [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "UNAUTHENTICATED",
                    "domain": "a2a-protocol.org", "metadata": {}}]


@pytest.mark.parametrize("credential", [None, "Bearer guess", "Basic dDBrOg==", "Bearer "])
@pytest.mark.parametrize("frame, version", [
    (b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "task-1"}}', "1.0"),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": "task-1"}}', None),  # 0.3's
    (b"{}", None),  # not a Request object at all: the credential is judged first all the same
])
def test_a_401_on_json_rpc_is_the_servers_own_unauthenticated_code_not_invalid_request(credential, frame, version):
    # -32600 would say "not a valid Request object"; A2A 1.0 section 3.3.2 names no JSON-RPC
    # code for a refused credential, so it is a server error of ours (-32041), with the
    # same ErrorInfo reason the HTTP+JSON binding sends, under the same 401 and challenge.
    transport = InProcessTransport({billing.BASE_URL: PeerApp(billing.billing_agent(), wire_v10, token="t0k")})
    headers = {"Content-Type": "application/json", **({"Authorization": credential} if credential else {}),
               **({"A2A-Version": version} if version else {})}
    refused = transport.post(billing.BASE_URL + "/a2a", frame, headers)
    invalid = ', error="invalid_token"' if credential == "Bearer guess" else ""  # RFC 6750 3.1: a token presented
    assert refused.status == 401 and refused.header("WWW-Authenticate") == 'Bearer realm="billing-agent"' + invalid
    assert json.loads(refused.body) == {"jsonrpc": "2.0", "id": None, "error": {
        "code": -32041, "message": "Unauthenticated: a valid bearer token is required", "data": UNAUTHENTICATED}}


@pytest.mark.parametrize("interfaces, found", [
    ([{"url": "https://x.example/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
      {"url": "https://x.example/v03", "protocolBinding": "JSONRPC", "protocolVersion": "0.3.0"}], "https://x.example/v03"),
    ([{"url": "https://x.example/v03", "protocolBinding": "GRPC", "protocolVersion": "0.3"}], None),
    ("not a list", None), ([None, 5, "x"], None), ([{"url": ["x"], "protocolBinding": "JSONRPC", "protocolVersion": "0.3"}], None),
])
def test_a_1_0_card_may_offer_a_0_3_interface_and_only_a_well_formed_one_counts(interfaces, found):
    assert wire_v10.interface_url({"supportedInterfaces": interfaces}, "0.3") == found


def test_a_0_3_task_in_the_unknown_state_is_read_and_handled_as_still_going():
    from peers.a2a import wire_v03
    from peers.support.calling.outcomes import Variant, variant_of
    task = wire_v03.task_from_result({"kind": "task", "id": "t", "contextId": "c", "status": {"state": "unknown"}})
    assert task.state.value == "unknown" and variant_of(task) is Variant.WORKING
    from peers.a2a.fields import WireError
    with pytest.raises(WireError):  # 1.0 has no such state: a peer that says so breaks the protocol
        wire_v10.task_from_wire({"id": "t", "status": {"state": "TASK_STATE_UNSPECIFIED"}})
    assert "result" in peer_with_clock()("ListTasks", {"status": "TASK_STATE_UNSPECIFIED"}), "as a filter: none"


# -- the extended card, and the extensions a caller activates -----------------------------

def rpc(app, method, params, headers):
    frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    response = InProcessTransport({billing.BASE_URL: app}).post(billing.BASE_URL + "/a2a", frame, headers)
    return response, json.loads(response.body)


def test_billing_shows_its_extended_card_to_a_caller_with_its_token_and_declares_it():
    from peers.a2a import wire_v03
    for wire, method, headers, flag in (
            (wire_v10, "GetExtendedAgentCard", HEADERS, lambda card: card["capabilities"]["extendedAgentCard"]),
            (wire_v03, "agent/getAuthenticatedExtendedCard", {"Content-Type": "application/json",
                                                              "Authorization": "Bearer t0k"},
             lambda card: card["supportsAuthenticatedExtendedCard"])):
        app = PeerApp(billing.billing_agent(), wire, token="t0k")
        public = json.loads(InProcessTransport({billing.BASE_URL: app}).get(
            billing.BASE_URL + "/.well-known/agent-card.json", {}).body)
        assert flag(public) is True and "For authenticated callers" not in public["description"]
        _, answer = rpc(app, method, {}, headers)
        assert answer["result"]["name"] == "billing-agent"
        assert answer["result"]["description"].endswith("an order is refunded once.")
        stranger, _ = rpc(app, method, {}, {**headers, "Authorization": "Bearer guess"})
        assert stranger.status == 401


def test_activated_extensions_are_echoed_and_a_required_one_left_out_is_minus_32008():
    from peers.a2a.schema import INPUT_SCHEMA_EXTENSION, RESULTS_EXTENSION
    peer = billing.billing_agent()
    app = PeerApp(peer, wire_v10, token="t0k")
    response, _ = rpc(app, "ListTasks", {}, {**HEADERS, "A2A-Extensions": f"{RESULTS_EXTENSION}, urn:unknown:x"})
    assert response.header("A2A-Extensions") == RESULTS_EXTENSION, "only what the card declares is echoed"
    response, _ = rpc(app, "ListTasks", {}, HEADERS)
    assert response.header("A2A-Extensions") is None
    peer.card = peer.card._replace(required_extensions=(INPUT_SCHEMA_EXTENSION,))
    strict = PeerApp(peer, wire_v10, token="t0k")
    card = json.loads(InProcessTransport({billing.BASE_URL: strict}).get(
        billing.BASE_URL + "/.well-known/agent-card.json", {}).body)
    extensions = card["capabilities"]["extensions"]
    assert extensions[0]["required"] is True and "required" not in extensions[1], "false: proto's default, left out"
    _, refused = rpc(strict, "SendMessage", {}, HEADERS)
    assert refused["error"]["code"] == -32008 and INPUT_SCHEMA_EXTENSION in refused["error"]["message"]
    assert refused["id"] == 1 and refused["error"]["data"][0]["reason"] == "EXTENSION_SUPPORT_REQUIRED"
    doubled = {**HEADERS, "A2A-Extensions": f"{INPUT_SCHEMA_EXTENSION},{INPUT_SCHEMA_EXTENSION}"}
    response, answer = rpc(strict, "ListTasks", {}, doubled)
    assert "result" in answer and response.header("A2A-Extensions") == INPUT_SCHEMA_EXTENSION, "each once"
    response, answer = rpc(strict, "ListTasks", {}, {**HEADERS, "X-A2A-Extensions": INPUT_SCHEMA_EXTENSION})
    assert "result" in answer and response.header("X-A2A-Extensions") == INPUT_SCHEMA_EXTENSION, "the name it came in"
    # 0.3 and the essay's wire, served from the same card, have no -32008: refused all the same, as an invalid request
    for method in ("tasks/get", "tasks/send"):
        _, refused = rpc(strict, method, {"id": "task-1"}, JSON_AUTH)
        assert refused["error"]["code"] == -32600 and INPUT_SCHEMA_EXTENSION in refused["error"]["message"], method
    _, answer = rpc(strict, "tasks/get", {"id": "task-1"}, {**JSON_AUTH, "X-A2A-Extensions": INPUT_SCHEMA_EXTENSION})
    assert answer["error"]["code"] == -32001, "activated: asked, and the task is not there"
