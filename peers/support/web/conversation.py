"""A conversation with one agent in the live page: its card fetched once, its OAuth token
reused until it expires, and the card told to the page as one line with a verdict.

Issue 35, item 2. Essay: The Agent Card ("fetching the card is all discovery is") and
Discovery is not trust. Spec: A2A 1.0 sections 8.2 (the card fetched), 8.6 (a card
may be cached), 4.4-4.5 (its fields and security); RFC 6749 section 5.1 (a token's
expires_in). Each turn is still a run of main() whose story is one operation
(outside.py): the card is read, checked and gated every turn, as in every run. What a
conversation changes is only what crosses: `Remembering`, the transport the run speaks
through (a wrapper of its printer, as the legacy card path is), answers a GET of the
card from what the first turn fetched, and a token request from the answer kept for it,
its expires_in counted down; each such answer is said in one line, never shown as a
frame, since it did not cross. The card is fetched again when the page asks (Fetch the
card again), and on the turn after the agent answered with an HTTP error (the card may
have changed: an endpoint or a scheme it no longer has). A 401 from the agent drops the
kept tokens, so the one the keyring fetches next is new (keyring.py does the rest). Every
request to the agent goes through the credentialed transport's `send`, so that is wrapped
too: a wrapper that heard only `post` heard the token requests, never the agent's answers.

The card is hostile: the line and the verdict are its fields shortened and escaped, the
whole card escaped text; the page puts them in as text. The verdict is the calling
side's own reading (card_reading.py: the fields its version requires, and the dialects
card_dialects.py recognises), plus a card that lists no skill. Not here: which card URL
an operation asks for (agent.py); the `check` command's full report.
"""
from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict

from peers.support.calling.oauth_tokens import LONGEST
from transports.base import ClientRequest, HttpResponse, Transport, header

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable

MOST = 32  # conversations kept; the oldest is forgotten first
MARGIN = 10.0  # seconds: a kept token this close to its expiry is not handed out again


class Conversation:
    """What one conversation with the agent whose card is at `card_url` has fetched."""

    def __init__(self, card_url: str) -> None:
        self.card_url = card_url
        self.card: HttpResponse | None = None  # the card as it was served, and on which turn
        self.fetched_on, self.turns, self.again = 0, 0, False
        self.tokens: dict[tuple[str, bytes, str], tuple[dict[str, Any], float]] = {}  # request -> answer, expiry


class Conversations:
    """The page's conversations, by the id the page gives one and the card URL: MOST kept."""

    def __init__(self) -> None:
        self.kept: OrderedDict[tuple[str, str], Conversation] = OrderedDict()
        self.lock = threading.Lock()

    def of(self, document: dict[str, Any], card_url: str) -> Conversation | None:
        """The conversation a POST /agent names (`conversation`: the page's id for it; `again`:
        fetch its card again), or None for a request that names none. ValueError, one line."""
        name, again = document.get("conversation", ""), document.get("again", False)
        if not isinstance(name, str) or len(name) > 64 or not name.isprintable() or not isinstance(again, bool):
            raise ValueError("'conversation' is the page's id for one (up to 64 characters); 'again' a bool")
        if not name:
            return None
        with self.lock:
            found = self.kept.pop((name, card_url), None) or Conversation(card_url)
            self.kept[(name, card_url)] = found
            while len(self.kept) > MOST:
                self.kept.popitem(last=False)
        found.again = found.again or again
        found.turns += 1
        return found


class Remembering:
    """The printer, wrapped for one turn of `conversation`: a card or token it has already
    is answered from memory (said with `say`); the card is told to the page with `tell`."""

    def __init__(self, printer: Transport, conversation: Conversation, say: Callable[..., None],
                 tell: Callable[[dict[str, Any]], None], clock: Callable[[], float] = time.monotonic) -> None:
        self.printer, self.conversation, self.say, self.tell, self.clock = printer, conversation, say, tell, clock
        self.label = printer.label

    def __getattr__(self, name: str) -> Any:  # everything else is the printer's (held, received, send ...)
        return getattr(self.printer, name)

    def get(self, url: str, headers: dict[str, str], *, binding: str | None = None) -> HttpResponse:
        talk = self.conversation
        if url != talk.card_url:
            return self.printer.get(url, headers, binding=binding)
        if talk.card is not None and not talk.again:
            self.say(f"[support] the card is the one fetched on turn {talk.fetched_on} of this conversation: "
                     "not fetched again (Fetch the card again does)")
            self.tell(card_event(talk.card.body, f"kept from turn {talk.fetched_on}"))
            return talk.card
        answer = self.printer.get(url, headers, binding=binding)
        if answer.status == 200 and isinstance(answer.body, bytes):
            talk.card, talk.fetched_on, talk.again = answer, talk.turns, False
            self.tell(card_event(answer.body, f"fetched on turn {talk.turns}"))
        return answer

    def post(self, url: str, body: bytes, headers: dict[str, str], *, binding: str | None = None) -> HttpResponse:
        return self._posted(url, body, headers, lambda: self.printer.post(url, body, headers, binding=binding))

    def stream(self, url: str, body: bytes, headers: dict[str, str], *, binding: str | None = None) -> HttpResponse:
        return self._posted(url, body, headers, lambda: self.printer.stream(url, body, headers, binding=binding))

    def send(self, request: ClientRequest, *, stream: bool = False) -> HttpResponse:
        """The printer's own `send`, which a credentialed transport above calls for every
        request to the agent: so its HTTP errors, and a 401, are heard here too."""
        if request.method == "GET" and not stream:
            return self.get(request.url, request.headers, binding=request.binding)
        return self._posted(request.url, request.body, request.headers,
                            lambda: self.printer.send(request, stream=stream))

    def _posted(self, url: str, body: bytes, headers: dict[str, str],
                sending: Callable[[], HttpResponse]) -> HttpResponse:
        talk, now = self.conversation, self.clock()
        asking = b"grant_type=" in body and "urlencoded" in (header(headers, "content-type") or "")
        key = (url, body, header(headers, "authorization") or "")
        kept = talk.tokens.get(key) if asking else None
        if kept is not None and now < kept[1] - MARGIN:  # its lifetime counted down, as if asked now
            self.say(f"[support] the OAuth token fetched earlier in this conversation is used again: "
                     f"it expires in {int(kept[1] - now)} s")
            return HttpResponse(200, {"Content-Type": "application/json"},
                                json.dumps({**kept[0], "expires_in": int(kept[1] - now)}).encode())
        answer = sending()
        if asking and answer.status == 200 and isinstance(answer.body, bytes):
            document = _json(answer.body)
            lifetime = document.get("expires_in") if isinstance(document, dict) else None
            if isinstance(lifetime, int) and not isinstance(lifetime, bool) and lifetime > 0:
                talk.tokens[key] = (document, now + min(lifetime, LONGEST))  # as the keyring keeps one: a day at most
        elif answer.status == 401:
            talk.tokens.clear()  # refused: the keyring asks for a new one, and gets it from the endpoint
        elif answer.status >= 400:
            talk.again = True  # its card may have changed: the next turn reads it afresh
        return answer


def card_event(body: bytes, how: str) -> dict[str, Any]:
    """The "card" event: its one line, its verdict, the whole card as text, and how it was had."""
    from peers.a2a.schema import problems
    from peers.a2a.wire_format import declared_by
    from peers.support.learner.steps import short
    from transports.escaping import escape
    document = _json(body)
    if not isinstance(document, dict):
        return {"type": "card", "line": "a card that is not a JSON object", "verdict": "unreadable",
                "problems": [], "card": escape(body.decode("utf-8", "replace")[:20_000], keep_newlines=True), "how": how}
    spoken = declared_by(document)
    found = problems(document, spoken.CARD_SCHEMA, "card", most=5)
    skills = document.get("skills") if isinstance(document.get("skills"), list) else []
    if not skills:
        found.append("card.skills: lists no skill, so nothing can be asked of it")
    if spoken.NAME == "1.0":
        from peers.support.calling.card_dialects import in_spec_form
        in_spec_form(document, warn=lambda said: found.append(f"a dialect: {said}"))
    auth = document.get("authentication")  # the essay's card; 1.0 and 0.3 name securitySchemes
    schemes = document.get("securitySchemes") or (auth.get("schemes") if isinstance(auth, dict) else None)
    names = list(schemes) if isinstance(schemes, (dict, list)) else []
    ids = [skill.get("id") for skill in skills if isinstance(skill, dict)]
    line = (f"{short(document.get('name'), 60)} · A2A {spoken.NAME} · {len(skills)} skill"
            f"{'' if len(skills) == 1 else 's'}: {short(', '.join(map(str, ids)), 80)} · "
            f"auth: {short(', '.join(map(str, names)), 60) or 'none'}")
    verdict = "the card reads as A2A " + spoken.NAME if not found else \
        f"{len(found)} problem{'' if len(found) == 1 else 's'} with the card"
    return {"type": "card", "line": line, "verdict": verdict, "problems": [short(text, 300) for text in found],
            "card": escape(json.dumps(document, indent=2, ensure_ascii=False)[:100_000], keep_newlines=True),
            "how": how}


def _json(body: bytes) -> Any:
    from transports.codec import loads_strict
    try:
        return loads_strict(body)
    except ValueError:
        return None
