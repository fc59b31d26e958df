"""--scenario round-trip: the boundary must not mangle structure: a case note full of URLs
and citations crosses the handoff, and comes back byte for byte.

Seed 000: "citations and URLs round-trip cleanly ... That's the contract: the boundary is
not allowed to mangle structure." The support agent hands billing the refund (the data
part) with the case note billing keeps beside it (in the message's metadata, `caseNote`):
links to the carrier's report and the order record (a query string, a fragment, a
percent-escape), parenthetical citations, a quoted line, a bulleted list, a letter
written as a base letter plus a combining mark (a boundary that normalises Unicode would
change its bytes) and a final newline. Billing acts on the data part and keeps the whole
message in the task's history. The support agent reads the task back (GetTask) and
compares the note in billing's answer, as our codec decoded it, with the note it sent,
as UTF-8 bytes: byte-identical, or it names the first line that differs and says the
boundary mangled it. The URLs and citations are listed, in order, so the learner sees
what a rewriting boundary (an HTML escaper, a link shortener, a translator) would break.
The essay's tasks/send carries no metadata and no history, so this speaks A2A 1.0 unless
--wire says.
"""
from __future__ import annotations

import hashlib
import re

from peers.a2a.model import AgentCard, Message
from peers.support.lessons import Lesson
from peers.support.lessons.turns import ask, contact_of, kept_message, open_lesson
from peers.support.output import Kind
from transports.errors import PeerError
from transports.escaping import escape

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any
    from peers.support.calling.story_steps import Steps
    from peers.support.calling.outcomes import Outcome

REFUND = {"order_id": "ORD-3300", "amount": 180.0}
NOTE = ("Case ORD-3300: the parcel arrived crushed; refund $180.00 in full (Refund policy, §4.2).\n"
        "Evidence, by reference:\n"
        "*   carrier report: https://carrier.example/claims/88412?ref=ORD-3300&lang=en%2Dgb#photos\n"
        "*   order record: https://orders.acme.example/api/v2/orders/ORD-3300 (Orders API, v2)\n"
        "The customer, Zoe\u0308 Brandt, wrote: \"Box crushed, glass broken \u2013 see the photos\" "
        "(ticket-8800, 2026-11-30).\n")
URL = re.compile(r"https?://[^\s)\"]+")
CITATION = re.compile(r"\([^()\n]*\)")

LESSON = Lesson(
    about="a case note full of URLs and citations crosses the handoff beside the refund; read back "
          "from billing's task, it is byte-identical",
    teaches="seed 000: the boundary is not allowed to mangle structure (citations and URLs round-trip)",
    order=180, flags={"--wire": "1.0"})  # the essay's tasks/send: one input, and no history to read back


def run(story: Steps, card_urls: list[str]) -> list[Outcome]:
    """Hand off the refund with its note; read the task back; compare the note byte for byte."""
    card = open_lesson(story, card_urls, "The boundary must not mangle structure: a note with URLs and "
                       "citations, handed off and read back byte for byte.",
                       lacks="metadata to carry the note, nor a task history to read it back from")
    if not isinstance(card, AgentCard):
        return card  # why it cannot go on, said already
    story.say(f"[support] the case note handed to billing beside the refund: {len(NOTE.encode())} bytes "
              f"of UTF-8, {len(URL.findall(NOTE))} URLs, {len(CITATION.findall(NOTE))} citations:")
    for line in NOTE.splitlines():
        story.say(f"  | {escape(line)}")
    outcome = story.delegate(card, "process_refund", REFUND, caseNote=NOTE)
    contact = contact_of(story, card, outcome)
    if outcome.task is None or contact is None:
        return [outcome]  # refused or failed: the story said why, and nothing came back to compare
    story.say("[support] reading the task back as billing keeps it (GetTask), to find our note in its history")
    try:
        kept = ask(story, contact, "get", {"id": outcome.task.id})  # as it came: our own reading keeps no history
    except PeerError as failure:
        return [story.failed(card.name, outcome.verdict, f"reading the task back failed: {failure}; "
                                                         f"{failure.retry_advice()}", failure)]
    compare(story, kept, outcome.sent)
    return [outcome]


def compare(story: Steps, kept: Any, sent: Message | None) -> bool:
    """Whether the note in billing's copy of our message (`kept`: the task as GetTask's
    result carries it) is the note we sent, byte for byte; said either way."""
    back = note_in(kept, sent.message_id if sent is not None else None)
    if back is None:
        story.say("[support] billing's task carries no copy of our note: nothing to compare "
                  "(A2A lets a server leave history out)", Kind.WARNING)
        return False
    if difference(NOTE, back) is None:
        digest = hashlib.sha256(back.encode()).hexdigest()[:16]
        story.say(f"[support] the note came back byte-identical: {len(back.encode())} bytes, sha256 {digest}...",
                  Kind.TRUSTED)
        story.say(f"[support] its URLs, in order, unchanged: {', '.join(URL.findall(back))}", Kind.TRUSTED)
        story.say(f"[support] its citations, in order, unchanged: {', '.join(CITATION.findall(back))}",
                  Kind.TRUSTED)
        return True
    story.say(f"[support] the boundary MANGLED the note: {difference(NOTE, back)}; this copy is not the note",
              Kind.ERROR)
    return False


def difference(sent: str, back: str) -> str | None:
    """Where `back` stops being `sent`, byte for byte (None: nowhere): the first line
    that differs, and both sizes in UTF-8 bytes."""
    if back.encode() == sent.encode():
        return None
    ours, theirs = sent.encode().split(b"\n"), back.encode().split(b"\n")
    line = next((n for n, (mine, got) in enumerate(zip(ours, theirs), 1) if mine != got),
                min(len(ours), len(theirs)) + 1)  # one is the other cut short: the line after
    return f"it differs from line {line} (sent {len(sent.encode())} bytes, got {len(back.encode())})"


def note_in(task: Any, message_id: str | None) -> str | None:
    """The case note of our message `message_id` as a task's history keeps it (metadata's
    caseNote), or None if it is not there."""
    message = kept_message(task, message_id)
    metadata = message.get("metadata") if message is not None else None
    note = metadata.get("caseNote") if isinstance(metadata, dict) else None
    return note if isinstance(note, str) else None
