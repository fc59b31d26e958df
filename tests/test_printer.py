"""The frame printer: escapes what a peer controls, masks credentials, records every frame."""
import json

import pytest

from peers import billing
from peers.a2a import wire_essay
from peers.app import PeerApp
from transports.escaping import escape
from transports.inprocess import InProcessTransport
from transports.printer import FramePrinter, mask, mask_body, masked


def test_control_characters_and_bidi_overrides_become_visible():
    assert escape("a\x1b[31mred\x07\u202eevil\x9b") == "a\\x1b[31mred\\x07\\u202eevil\\x9b"
    assert escape("line1\nline2", keep_newlines=True) == "line1\nline2"
    assert escape("line1\nline2") == "line1\\x0aline2"


def test_credentials_are_masked_but_their_scheme_is_kept():
    assert mask({"Authorization": "Bearer s3cret", "Content-Type": "application/json"}) == \
        {"Authorization": "Bearer ****#1ec1", "Content-Type": "application/json"}
    assert mask({"x-api-key": "k"}) == {"x-api-key": "****#8254"}


def test_a_masked_secret_carries_a_short_fingerprint_that_tells_two_apart_and_never_the_secret():
    import hashlib
    first, step_up = mask({"Authorization": "Bearer t0k"}), mask({"Authorization": "Bearer up-t0k"})
    assert first != step_up and first["Authorization"].startswith("Bearer ****#")
    assert first["Authorization"] == "Bearer ****#" + hashlib.sha256(b"t0k").hexdigest()[:4]
    assert len(first["Authorization"]) == len("Bearer ****#") + 4, "16 bits: tells two apart, recovers nothing"
    assert masked("") == "****", "nothing to fingerprint"
    assert mask({"Authorization": "Bearer \udcff"})["Authorization"].startswith("Bearer ****#"), "any text at all"
    assert mask_body('{"token": "a"}') != mask_body('{"token": "b"}')


def test_the_printer_records_masked_headers_and_never_prints_the_token():
    lines = []
    app = PeerApp(billing.billing_agent(), wire_essay, token="s3cret")
    printer = FramePrinter(InProcessTransport({billing.BASE_URL: app}), lambda text, frame: lines.append(text))
    frame = b'{"jsonrpc": "2.0", "id": 1, "method": "tasks/send", "params": {"skill": "process_refund", "input": {"order_id": "A", "amount": 1}}}'
    response = printer.post("https://billing.acme.example/a2a", frame,
                            {"Content-Type": "application/json", "Authorization": "Bearer s3cret"})
    assert response.status == 200
    assert printer.frames[0].headers["Authorization"] == "Bearer ****#1ec1"
    assert printer.frames[0].body == frame and printer.frames[1].body == response.body
    assert not any("s3cret" in line for line in lines)


def test_a_huge_frame_is_shown_cut_but_recorded_whole():
    lines = []
    app = PeerApp(billing.billing_agent(), wire_essay)
    printer = FramePrinter(InProcessTransport({billing.BASE_URL: app}), lambda text, frame: lines.append(text))
    body = b'{"x": "' + b"y" * 20_000 + b'"}'
    printer.post("https://billing.acme.example/a2a", body, {"Content-Type": "application/json"})
    assert "more characters not shown" in lines[0] and len(lines[0]) < 9000
    assert printer.frames[0].body == body


@pytest.mark.parametrize("body, shown", [
    (b'{"token": "s3cret"}', '{"token": "****#1ec1"}'),
    (b'{"a": {"credentials": "x\\"y"}, "token":"t"}', '{"a": {"credentials": "****#25bb"}, "token":"****#e3b9"}'),
    (b'{"tokens": "keep"}', '{"tokens": "keep"}'),
])
def test_a_secret_inside_a_body_is_shown_masked(body, shown):
    from transports.printer import _text
    assert _text(body) == shown


def test_beneath_sends_a_block_through_another_transport_shows_every_frame_and_puts_the_first_back():
    billing_app = PeerApp(billing.billing_agent(), wire_essay)
    first = InProcessTransport({billing.BASE_URL: billing_app})
    other = InProcessTransport({billing.BASE_URL: billing_app})
    seen = []
    printer = FramePrinter(first, lambda text, frame: seen.append(text))
    card = billing.BASE_URL + "/.well-known/agent-card.json"
    with pytest.raises(RuntimeError):
        with printer.beneath(other) as below:
            assert below is first and printer.inner is other
            assert printer.get(card, {}).status == 200
            raise RuntimeError("the block ends badly")
    assert printer.inner is first, "what lay below is back however the block ended"
    assert [frame.direction for frame in printer.frames] == ["-->", "<--"] and seen[0] == f"--> GET {card}"


def test_a_credential_in_a_url_query_is_shown_masked_like_a_forms():
    """An API key may ride in the query (A2A 4.5: location "query"); the printer shows the
    path and query of every request line, so a key there is masked as a form's field is."""
    shown = mask_body("/a2a?api_key=k3y-secret&x=1&token=t0k#frag")
    assert "k3y-secret" not in shown and "t0k" not in shown and "x=1" in shown and "#frag" in shown
    assert mask_body("/a2a?access_token=abc") == f"/a2a?access_token={masked('abc')}"
    assert mask_body("/tasks?monkey=banana") == "/tasks?monkey=banana"  # a name ending in key is not a key


@pytest.mark.parametrize("text", ["[--> GET http://x/a?api_key=SECRETAAAA1] Accept: */*", '"http://x/?api_key=SECRETAAAA1"',
                                  "http://x/?api_key=SECRETAAAA1", "<http://x/?token=SECRETAAAA1>"])
def test_a_query_secret_has_one_fingerprint_whatever_the_line_puts_after_it(text):
    """A query's value runs to what no query holds unescaped: the "]" a --verbose line puts after a
    URL was taken for part of the key, which then showed two fingerprints for one secret."""
    assert masked("SECRETAAAA1") in mask_body(text) and "SECRETAAAA1" not in mask_body(text)


def test_a_card_urls_query_secret_is_masked_in_the_trace_as_on_screen(tmp_path):
    from conftest import ROOT, cli
    registry = json.loads((ROOT / "registry.json").read_text())  # the essay's, billing's card URL given a key
    registry["peers"][0]["cardUrl"] += "?api_key=SECRETAAAA1"
    (tmp_path / "registry.json").write_text(json.dumps(registry))
    done = cli("--registry", str(tmp_path / "registry.json"), "--transport", "http",
               "--trace", str(tmp_path / "run.jsonl"))
    traced = (tmp_path / "run.jsonl").read_text()
    assert done.returncode == 0 and "SECRETAAAA1" not in traced + done.stdout + done.stderr
    assert f"api_key={masked('SECRETAAAA1')}" in traced.splitlines()[0], "the registry's record: its card URLs"


def test_masking_what_is_masked_already_changes_nothing_so_a_trace_read_back_shows_what_the_run_showed():
    """A secret field's value is masked wherever its body repeats it; masked once, the text is
    masked: --replay and the page mask a trace's bodies again, and each fingerprint stays as shown."""
    body = '{"access_token": "AT-live-token-7f3a9c1e5b", "issued_for": "AT-live-token-7f3a9c1e5b"}&token=t0k3n-abcdef'
    once = mask_body(body)
    assert "AT-live" not in once and once.count(masked("AT-live-token-7f3a9c1e5b")) == 2
    assert mask_body(once) == once


def test_a_mebibyte_of_secret_fields_is_masked_each_in_its_place_in_about_one_pass():
    """Each secret field's value is looked for elsewhere in its body: the first few only. Every one
    was, each over the whole body, and 20,000 fields took seconds a frame (minutes at a proxy's
    pace). The bound is tens of times the time one pass takes: a hang guard, not a benchmark."""
    import time
    body = json.dumps({"items": [{"token": f"secret-value-{n:08d}"} for n in range(28_000)]})
    started = time.process_time()
    shown = mask_body(body)
    assert time.process_time() - started < 2.0 and "secret-value" not in shown
