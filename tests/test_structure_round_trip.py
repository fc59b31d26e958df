"""--scenario round-trip: a case note with URLs and citations crosses the handoff and is
read back from billing's task byte for byte; and the check that says so can fail."""
import json
import unicodedata

import pytest

from conftest import cli_together, frames, lesson as both_transports
from peers.support.lessons.round_trip import CITATION, NOTE, URL, difference, note_in


def lesson(*extra):
    """The round-trip lesson over both transports, which print the same (conftest): its lines."""
    done, lines = both_transports("round-trip", *extra)
    assert done.returncode == 0 and done.stderr == ""
    return lines


@pytest.mark.parametrize("wire", ["1.0", "0.3"])
def test_the_note_crosses_the_handoff_and_comes_back_from_billings_task_byte_identical(wire):
    lines = lesson("--wire", wire)
    sent, answers = frames(lines, "-->"), frames(lines, "<--")
    assert len(sent) == 2 and sent[1]["method"] in ("GetTask", "tasks/get")
    assert sent[0]["params"]["message"]["metadata"]["caseNote"] == NOTE, "the note as it left"
    assert note_in(answers[1]["result"], sent[0]["params"]["message"]["messageId"]) == NOTE, "as billing keeps it"
    assert "[support] the note came back byte-identical: 399 bytes, sha256 " in "\n".join(lines)
    assert ("[support] its URLs, in order, unchanged: https://carrier.example/claims/88412?ref=ORD-3300&lang=en%2Dgb"
            "#photos, https://orders.acme.example/api/v2/orders/ORD-3300") in lines
    assert ("[support] its citations, in order, unchanged: (Refund policy, §4.2), (Orders API, v2), "
            "(ticket-8800, 2026-11-30)") in lines
    assert "[support] trusted result (from billing-agent): refund of $180.00 issued for ORD-3300 (ref BILL-ORD-3300)" in lines


def test_the_note_is_written_to_catch_a_boundary_that_rewrites_text():
    assert unicodedata.normalize("NFC", NOTE) != NOTE, "a normalising boundary would change its bytes"
    assert "&" in NOTE and "%2D" in NOTE and "#" in NOTE and NOTE.endswith("\n")
    assert len(URL.findall(NOTE)) == 2 and len(CITATION.findall(NOTE)) == 3


@pytest.mark.parametrize("mangle, line", [
    (lambda note: unicodedata.normalize("NFC", note), 5),  # Unicode normalised
    (lambda note: note.replace("&", "&amp;"), 3),  # HTML-escaped
    (lambda note: note.replace("%2D", "-"), 3),  # a URL "cleaned"
    (lambda note: note.replace("(Orders API, v2)", "[Orders API, v2]"), 4),  # a citation restyled
    (lambda note: note.rstrip("\n"), 6),  # the final newline dropped
    (lambda note: note.replace("\n", "\r\n"), 1),  # line ends rewritten
    (lambda note: note + "\n", 7),  # one more line
])
def test_the_check_names_where_a_mangled_note_first_differs(mangle, line):
    assert difference(NOTE, NOTE) is None
    said = difference(NOTE, mangle(NOTE))
    assert said is not None and said.startswith(f"it differs from line {line} (sent 399 bytes, got ")


@pytest.mark.parametrize("task", [
    None, [], "x", {"history": "x"}, {"history": [None, 5]}, {"history": [{"messageId": "m-2"}]},
    {"history": [{"messageId": "m-1", "metadata": ["caseNote"]}]},
    {"history": [{"messageId": "m-1", "metadata": {"caseNote": 5}}]},
])
def test_a_task_that_does_not_carry_our_note_is_read_as_none_never_a_crash(task):
    assert note_in(task, "m-1") is None


def test_on_the_essays_wire_it_says_what_is_missing_and_sends_nothing():
    (done,) = cli_together(("--scenario", "round-trip", "--wire", "essay"))
    assert done.returncode == 2 and '"method"' not in done.stdout
    assert "the essay's tasks/send has no metadata to carry the note" in done.stderr


def test_without_billings_card_it_ends_with_that_one_line(tmp_path, closed_port):
    from conftest import cli
    registry = tmp_path / "registry.json"
    registry.write_text(json.dumps({"peers": [{"cardUrl": f"http://127.0.0.1:{closed_port}/.well-known/agent-card.json"}]}))
    done = cli("--scenario", "round-trip", "--registry", str(registry), "--transport", "http")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert [line.split(": card fetch failed: ")[1][:20] for line in done.stderr.splitlines()] == ["could not connect to"]
