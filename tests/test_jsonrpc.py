"""The sans-IO JSON-RPC core, against the JSON-RPC 2.0 specification's own examples
(section 7) and hostile input a peer we do not own might send."""
import json

import pytest

from transports import codec, jsonrpc
from transports.jsonrpc import ErrorCode, InvalidParams, dispatch


def subtract(params, context):
    if isinstance(params, list):
        return params[0] - params[1]
    if not isinstance(params, dict) or set(params) != {"minuend", "subtrahend"}:
        raise InvalidParams("expected minuend and subtrahend")
    return params["minuend"] - params["subtrahend"]


def broken(params, context):
    raise RuntimeError("database password is hunter2")


METHODS = {"subtract": subtract, "update": lambda p, c: None, "broken": broken}
LOG: list[str] = []


def answer(frame: str | bytes):
    data = frame.encode() if isinstance(frame, str) else frame
    body = dispatch(data, METHODS, log=LOG.append)
    return None if body is None else json.loads(body)


# -- the specification's examples ------------------------------------------------------

@pytest.mark.parametrize("frame, result, rid", [
    ('{"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1}', 19, 1),
    ('{"jsonrpc": "2.0", "method": "subtract", "params": [23, 42], "id": 2}', -19, 2),
    ('{"jsonrpc": "2.0", "method": "subtract", "params": {"subtrahend": 23, "minuend": 42}, "id": 3}', 19, 3),
    ('{"jsonrpc": "2.0", "method": "subtract", "params": {"minuend": 42, "subtrahend": 23}, "id": 4}', 19, 4),
])
def test_the_specs_calls_with_positional_and_named_params_get_its_results(frame, result, rid):
    assert answer(frame) == {"jsonrpc": "2.0", "id": rid, "result": result}


@pytest.mark.parametrize("frame", [
    '{"jsonrpc": "2.0", "method": "update", "params": [1,2,3,4,5]}',
    '{"jsonrpc": "2.0", "method": "foobar"}',
])
def test_spec_notifications_get_no_reply_even_for_unknown_methods(frame):
    assert answer(frame) is None


def test_spec_unknown_method_is_minus_32601():
    reply = answer('{"jsonrpc": "2.0", "method": "foobar", "id": "1"}')
    assert reply["id"] == "1" and reply["error"]["code"] == -32601
    assert reply["error"]["message"] == "Method not found"


@pytest.mark.parametrize("frame", [
    '{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]',
    '[{"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"}, {"jsonrpc": "2.0", "method"]',
])
def test_spec_invalid_json_is_parse_error_with_null_id(frame):
    reply = answer(frame)
    assert reply["error"]["code"] == -32700 and reply["id"] is None


@pytest.mark.parametrize("frame", [
    '{"jsonrpc": "2.0", "method": 1, "params": "bar"}',
    "[]",
    "[1]",
    "[1,2,3]",
    '[{"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1}]',
])
def test_spec_invalid_request_and_batches_are_minus_32600(frame):
    reply = answer(frame)
    assert isinstance(reply, dict), "one error object, never an array"
    assert reply["error"]["code"] == -32600 and reply["id"] is None


# -- hostile and edge input ------------------------------------------------------------

@pytest.mark.parametrize("frame, code", [
    (b"\xff\xfe not utf-8", ErrorCode.PARSE_ERROR),
    ('{"jsonrpc": "2.0", "method": "subtract", "params": [NaN, 1], "id": 1}', ErrorCode.PARSE_ERROR),
    ('{"jsonrpc": "2.0", "method": "subtract", "params": [Infinity, 1], "id": 1}', ErrorCode.PARSE_ERROR),
    ('{"jsonrpc": "2.0", "method": "subtract", "method": "update", "id": 1}', ErrorCode.PARSE_ERROR),
    ("[" * 100_000, ErrorCode.PARSE_ERROR),
    ('{"jsonrpc": "1.0", "method": "subtract", "params": [1, 1], "id": 1}', ErrorCode.INVALID_REQUEST),
    ('{"method": "subtract", "params": [1, 1], "id": 1}', ErrorCode.INVALID_REQUEST),
    ('{"jsonrpc": "2.0", "method": "subtract", "params": [1, 1], "id": true}', ErrorCode.INVALID_REQUEST),
    ('{"jsonrpc": "2.0", "method": "subtract", "params": [1, 1], "id": 1.5}', ErrorCode.INVALID_REQUEST),
    ('{"jsonrpc": "2.0", "method": "subtract", "params": [1, 1], "id": {"a": 1}}', ErrorCode.INVALID_REQUEST),
    ('{"jsonrpc": "2.0", "method": "subtract", "params": 5, "id": 1}', ErrorCode.INVALID_REQUEST),
    ('"just a string"', ErrorCode.INVALID_REQUEST),
    ('{"jsonrpc": "2.0", "method": "subtract", "params": {"minuend": 1}, "id": 1}', ErrorCode.INVALID_PARAMS),
])
def test_hostile_frames_get_the_right_code(frame, code):
    reply = answer(frame)
    assert reply["error"]["code"] == code
    assert reply["jsonrpc"] == "2.0"


def test_a_valid_id_is_echoed_even_when_the_request_is_invalid():
    reply = answer('{"jsonrpc": "2.0", "method": 7, "id": "abc"}')
    assert reply == {"jsonrpc": "2.0", "id": "abc",
                     "error": {"code": -32600, "message": 'Invalid Request: "method" must be a string'}}


def test_oversize_frames_are_refused_before_parsing():
    big = b'{"jsonrpc": "2.0", "method": "update", "params": ["' + b"x" * 2048 + b'"], "id": 1}'
    reply = json.loads(dispatch(big, METHODS, max_bytes=1024))
    assert reply["error"]["code"] == -32600 and "larger than 1024" in reply["error"]["message"]


def test_internal_errors_are_a_generic_minus_32603_and_the_detail_goes_to_the_log():
    LOG.clear()
    reply = answer('{"jsonrpc": "2.0", "method": "broken", "id": 9}')
    assert reply == {"jsonrpc": "2.0", "id": 9, "error": {"code": -32603, "message": "Internal error"}}
    assert "hunter2" in LOG[0]


def test_a_result_that_cannot_be_encoded_is_an_internal_error_not_a_crash():
    body = dispatch(b'{"jsonrpc": "2.0", "method": "x", "id": 1}', {"x": lambda p, c: float("nan")})
    assert json.loads(body)["error"]["code"] == -32603


# -- the client side ---------------------------------------------------------------------

def test_requests_are_encoded_in_the_essays_key_order():
    frame = jsonrpc.encode_request(1, "tasks/send", {"skill": "s", "input": {}})
    assert frame == b'{"jsonrpc": "2.0", "id": 1, "method": "tasks/send", "params": {"skill": "s", "input": {}}}'


def test_a_remote_error_is_raised_with_its_code():
    with pytest.raises(jsonrpc.RemoteError) as info:
        jsonrpc.decode_response(b'{"jsonrpc": "2.0", "id": 3, "error": {"code": -32601, "message": "Method not found"}}', 3)
    assert info.value.code == -32601


@pytest.mark.parametrize("frame", [
    b"<html>502 Bad Gateway</html>",
    b'{"jsonrpc": "2.0", "id": 2, "result": 1}',  # answers another request
    b'{"jsonrpc": "2.0", "id": "1", "result": 1}',  # same digits, different type
    b'{"jsonrpc": "2.0", "id": 1}',  # neither result nor error
    b'{"jsonrpc": "2.0", "id": 1, "result": 1, "error": {"code": 1, "message": "x"}}',
    b'{"jsonrpc": "2.0", "id": 1, "error": {"code": "bad", "message": "x"}}',
    b'{"jsonrpc": "2.0", "id": 1, "result": 1, "result": 2}',  # duplicate key
])
def test_broken_responses_are_protocol_violations(frame):
    with pytest.raises(jsonrpc.ProtocolViolation):
        jsonrpc.decode_response(frame, 1)


@pytest.mark.parametrize("bad_id", [True, 1.0, None, [1]])
def test_the_client_never_sends_an_ambiguous_id(bad_id):
    with pytest.raises(ValueError):
        jsonrpc.encode_request(bad_id, "m", {})


# -- the codec's limits: well-formed JSON can still be too much ------------------------------

@pytest.mark.parametrize("document, reason", [
    ("[" * 33 + "]" * 33, "nested deeper than 32"),
    ("[" + "[]," * 10_001 + "[]]", "more than 10000 arrays and objects"),
    ('{"amount": ' + "9" * 41 + "}", "longer than 40 characters"),
    ('{"amount": 1e999}', "out of range"),
    ('{"amount": -1e999}', "out of range"),
    ('{"a": 1, ' + ", ".join(f'"k{n}": 0' for n in range(40_000)) + ', "a": 2}', "duplicate key 'a'"),
])
def test_the_codec_refuses_what_exceeds_its_limits_naming_the_limit(document, reason):
    with pytest.raises(ValueError, match=reason):
        codec.loads_strict(document)


def test_brackets_inside_strings_do_not_count_as_nesting():
    text = '{"note": "' + "[" * 5000 + '\\" {{{"}'
    assert codec.loads_strict(text) == {"note": "[" * 5000 + '" {{{'}


def test_everything_the_codec_accepts_can_be_encoded_back():
    deepest = "[" * 32 + "]" * 32
    widest = '{"n": ' + "1" * 40 + ', "s": "\\ud800", "x": 1.7976931348623157e308}'
    for text in (deepest, widest):
        assert codec.loads_strict(codec.dumps(codec.loads_strict(text))) == codec.loads_strict(text)


@pytest.mark.parametrize("options", [{}, {"sort_keys": True, "default": repr}, {"separators": (",", ":")},
                                     {"allow_nan": False}])
def test_the_codecs_encoders_write_what_json_writes_with_the_same_options(options):
    """codec.encoder calls the C encoder directly: the same text as json's own, byte for byte."""
    values = [{"b": [1, 2.5, -0.0, 10**30, True, None], "a": "caf\u00e9 \u2603 \"q\" \n \ud800", "": {}},
              "top-level text", 3, [], {"z": {"y": {"x": [{"w": 1e-7}]}}}]
    encode = codec.encoder(**options)
    for value in values:
        assert encode(value) == json.JSONEncoder(**options).encode(value)
    if options.get("default") is repr:
        assert encode({"bytes": b"\x00"}) == json.dumps({"bytes": b"\x00"}, default=repr, sort_keys=True)
    for odd in ([float("nan")], {"x": float("inf")}):
        if options.get("allow_nan", True):
            assert encode(odd) == json.JSONEncoder(**options).encode(odd)
        else:
            with pytest.raises(ValueError):
                encode(odd)
    with pytest.raises(TypeError):
        codec.encoder()({"a set": {1}})


def test_an_unterminated_string_full_of_escapes_is_scanned_once_not_once_per_quote():
    # Each '"\\' would restart a string scan that runs to the end: 300,000 of them made
    # the first codec take minutes. Scanned once, it is refused at once.
    text = "[" * 40 + '"\\' * 300_000
    with pytest.raises(ValueError):
        codec.loads_strict(text)


@pytest.mark.parametrize("result", [[[]] * 20_000, "[" * 200 + "]" * 200])
def test_a_reply_that_is_json_but_over_the_clients_limits_is_said_so_not_called_not_json(result):
    """An artifact of 20,000 parts was reported as "response is not JSON (more than 10000 ...)"."""
    from transports.jsonrpc import ProtocolViolation, decode_response
    body = ('{"jsonrpc": "2.0", "id": 1, "result": ' + (json.dumps(result) if isinstance(result, list) else result)
            + "}").encode()
    with pytest.raises(ProtocolViolation) as refused:
        decode_response(body, 1)
    assert "response is over this client's limits (" in str(refused.value) and "not JSON" not in str(refused.value)


@pytest.mark.parametrize("seed", range(4))
def test_unpaired_surrogates_are_refused_exactly_when_the_decoded_text_holds_one(seed):
    """Limits(unpaired_surrogates=False), as a served peer reads requests, judges the raw text's
    escapes (an escaped backslash, a high-low pair, one alone) in C, not every decoded string in
    Python: it must refuse exactly what decodes to a string UTF-8 cannot carry, in keys as in values
    (an escaped backslash between a high and a low escape once made them look like a pair)."""
    import random
    rnd = random.Random(seed)
    pieces = ["a", "\\\\", "\\ud800", "\\udbff", "\\udc00", "\\uDFFF", "\\ud83d\\ude00", "\\uD83D\\uDE00", "\\n",
              "\\u0041", "\\ud7ff", "\\ue000", "u", "d800", "\\\\u", "\\"+"\\"+"\\ud800", '\\"']
    strict = codec.LIMITS._replace(unpaired_surrogates=False)
    for _ in range(500):
        text = "".join(rnd.choice(pieces) for _ in range(rnd.randrange(1, 7)))
        document = f'{{"{text}": ["{text[::-1]}" , "{text}"]}}' if rnd.random() < 0.5 else f'["{text}"]'
        try:
            decoded = json.loads(document)
        except ValueError:  # a reversed escape may not be JSON at all
            continue
        unpaired = any(0xD800 <= ord(char) <= 0xDFFF for char in json.dumps(decoded, ensure_ascii=False))
        if unpaired:
            with pytest.raises(codec.NotText, match="unpaired surrogate"):
                codec.loads_strict(document.encode(), strict)
        else:
            assert codec.loads_strict(document.encode(), strict) == decoded
        assert codec.loads_strict(document.encode()) == decoded, "kept by default (the proxy shows what came)"


def test_a_frame_holding_an_unpaired_surrogate_is_an_invalid_request_answered_with_its_id_unless_that_is_it():
    """It is JSON, so it is no parse error, and its id can be read; an id that is itself the string
    holding the surrogate is not echoed (the answer would hold it, and be no text either)."""
    strict = codec.LIMITS._replace(unpaired_surrogates=False)
    for frame, expected_id in [(b'{"jsonrpc": "2.0", "id": 7, "method": "m", "params": {"a": "\\ud800"}}', 7),
                               (b'{"jsonrpc": "2.0", "id": "x\\udc00", "method": "m"}', None),
                               (b'["\\ud800"]', None)]:
        answer = json.loads(dispatch(frame, {"m": lambda params, context: "ok"}, limits=strict))
        assert answer["id"] == expected_id and answer["error"]["code"] == ErrorCode.INVALID_REQUEST
        assert "unpaired surrogate" in answer["error"]["message"]
        json.dumps(answer, ensure_ascii=False).encode("utf-8")  # the answer itself is text
    notification = b'{"jsonrpc": "2.0", "method": "m", "params": {"a": "\\ud800"}}'
    assert dispatch(notification, {"m": lambda params, context: "ok"}, limits=strict) is None, "spec 4.1: no answer"
