"""The proxy as an app: each request forwarded to the agent, each answer back, each frame printed.

Our server (transports/server.py) reads each client request under its limits and hands it
here; it goes on to the agent through the frame printer wrapping our network transport
(its deadline and body limit), so the printer shows and records it, and the answer comes
back the same way. Forwarded unchanged: the verb, the path and query, the body, every
header but the hop-by-hop ones (RFC 9110 7.6.1) and those each hop writes for itself (Host,
Content-Length) but Accept-Encoding, asked as identity (the proxy prints frames, not gzip, and
identity is what every client takes), and Via, the proxy added (message_forwarding.py: a request
whose Via names it already came round, and is answered 508 Loop Detected); an answer's status,
headers (the same rule) and body; a stream (Server-Sent Events) chunk by chunk as it arrives, never gathered first (passing.py). A request body
a client sent chunked reaches us whole (our server decodes it, within the same limit as a
Content-Length one) and goes on with a Content-Length: chunking is a hop's own framing. HEAD
goes on as HEAD, its answer back as the agent's status and headers, no body [RFC 9110 9.3.2].
The card alone is changed (card.py). A fault (faults.py) acts here or, on an answer's bytes, in passing.py,
and says so; each answer is judged by annotate.py, as the agent sent it. A failure of the agent (no answer, garbage, too large, too
slow) is one finding line and a 502 (504 for a deadline) to the client. Not here: HTTP
itself (transports/), TLS (tls.py), moving a push config's URL (webhook.py).
"""
from __future__ import annotations

import json
import threading
import time

from peers.a2a import versions
from peers.a2a.bindings import HTTP_JSON, JSONRPC
from peers.a2a.wire_format import CARD_PATH
from peers.support.proxy import annotate, card, passing
from peers.support.proxy.faults import Faults
from peers.support.proxy.message_forwarding import came_round, end_to_end, pseudonym, uncoded, with_via
from peers.support.proxy.webhook import Webhooks
from transports.base import Body, ClientRequest, HangUp, HttpRequest, HttpResponse, hang_up, parse_url
from transports.errors import MAY_HAVE_ACTED, TransportError
from transports.escaping import escape
from transports.masking import carried

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable

MOST_HELD = 16  # the clients' latest credentials, masked wherever an answer shows them: a few, however long it runs


def from_a_page(request: HttpRequest, names: tuple[str, ...]) -> str | None:
    """What shows a request may come from a web page elsewhere, or None. Forwarded, it would act as the proxy's
    credentials (--client-cert) and reach the agent from this machine, so it is refused, as the live page
    refuses one: a Host naming neither 127.0.0.1 nor localhost (at any port, or none: clients leave a default
    port out) nor an --allow-host name (a page that rebound a name of its own to 127.0.0.1, DNS rebinding); or
    an Origin at none of them (a cross-site page's POST, which names the proxy's own Host; a browser sends its
    Origin, which no page can take off, and a program none). No Host (HTTP/1.0) is no browser's request."""
    host, origin, known = request.header("Host"), request.header("Origin"), ("127.0.0.1", "localhost", *names)
    if host is not None and _name(parse_url(f"http://{host}/")) not in known:
        return f"Host {host[:80]}"
    if origin is not None and _name(parse_url(origin)) not in known:  # "null" too: a sandboxed page
        return f"Origin {origin[:80]}"
    return None


def _name(url: Any) -> str:
    """The host a URL names (read by the one URL check: in lower case, its port apart), a final dot left out;
    "" for what is no URL (then no name the proxy answers at)."""
    return url.host.rstrip(".") if url is not None else ""


class Exchange(threading.local):
    """The number of the request this thread forwards, and whose stream it passes on (faults.py's N): each frame
    line names it, so that the interleaved lines of clients at once can be told apart, and a fault aimed."""
    number = 0


class Proxy:
    answers_head = True  # our server asks it HEAD as HEAD (transports/base.py's App), forwarded as such

    def __init__(self, to: str, printer: Any, say: Callable[[str], None], faults: Faults, *,
                 keep_card: bool = False, pushes: Any = None, timeout: float = 30.0, hosts: tuple[str, ...] = ()) -> None:
        self.agent = parse_url(to).origin  # every request goes there, its Host one the proxy answers at (`misaddressed`)
        self.hosts = hosts  # --allow-host: names beside 127.0.0.1 and localhost
        self.timeout = timeout  # --timeout: how long a stream a fault drains may go on
        self.printer, self.faults, self.keep_card = printer, faults, keep_card
        # --webhook: deliveries to the proxy's /webhook/K go on to the client's receiver, through
        # a printer of their own (they cross the other way); webhook.py moves and restores URLs.
        self.pushes, self.webhooks = pushes, Webhooks("") if pushes is not None else None
        # Each line says one thing: a line break an agent put in a card's URL or an error's id
        # is shown as \x0a, never a second line that could pass for one of ours.
        self.say = lambda text: say(escape(text))
        self.base, self._card_said = "", False  # base: the proxy's own URL, once the server is bound
        # A client's credentials are masked in its headers; an agent may say them back in a body
        # (an error that quotes the token): the printer and the trace's recorder hold them too.
        self.holders, self._held, self._holding = [printer], (), threading.Lock()
        self.exchange = Exchange()
        self.pseudonym = pseudonym()  # its name in each Via it adds (message_forwarding.py), to see a loop by

    def __call__(self, request: HttpRequest) -> HttpResponse:
        page = from_a_page(request, self.hosts)
        if page is not None:  # 421 for a name this proxy does not answer at; 403 for a page's request to it
            self.say(f"[proxy] refused a request naming {page}: this proxy answers at 127.0.0.1 or localhost (a web "
                     "page elsewhere could act through it); --allow-host NAME answers at NAME too")
            return HttpResponse(421 if page.startswith("Host") else 403, {"Content-Type": "text/plain; charset=utf-8"},
                                b"this proxy answers at 127.0.0.1 or localhost, and at each --allow-host name\n")
        if came_round(request.headers, self.pseudonym):  # forwarded, it would come round again, and again
            self.say(f"[proxy] refused a request ({request.method} {request.url[len(self.base):][:80] or '/'}): its Via "
                     f"names this proxy ({self.pseudonym}) already: it came round, --to leading back here (through another "
                     "proxy, or by another name for this one); the client gets 508 Loop Detected")
            return HttpResponse(508, {"Content-Type": "text/plain; charset=utf-8"},
                                b"508: loop detected: this request came round to the same proxy again (its Via)\n")
        number, acting = self.faults.next_request()
        self.exchange.number = number
        self._hold(request.headers, request.body if isinstance(request.body, bytes) else b"")
        target = request.url[len(self.base):] or "/"  # the server hands us base + the request's target
        receiver = self.webhooks.receiver(target) if self.webhooks is not None else None
        who = "the agent" if receiver is None else "the client's receiver"
        for fault in acting:
            if fault.kind == "status":
                self.say(f"[fault] {fault.spec}: answered request {number} ({request.method} {target[:80]}) with "
                         f"{int(fault.value)} and Retry-After: 1; {who} never saw it")
                return HttpResponse(int(fault.value), {"Content-Type": "text/plain; charset=utf-8", "Retry-After": "1"},
                                    b"%d: a fault the proxy was asked for; retry in a second\n" % int(fault.value))
            if fault.kind == "delay":
                self.say(f"[fault] {fault.spec}: held request {number} ({request.method} {target[:80]}) "
                         f"{fault.value:g} s before forwarding it")
                time.sleep(fault.value)
        on_card = receiver is None and target.partition("#")[0].partition("?")[0] == CARD_PATH  # its path
        is_card, bare = on_card and request.method == "GET", request.method == "HEAD"
        body, printer = request.body, self.printer if receiver is None else self.pushes
        if self.webhooks is not None and receiver is None:
            body, said = self.webhooks.move(body, request.method, target)
            for line in said:
                self.say(line)
        asked = ClientRequest(request.method, receiver or self.agent + target,
                              with_via(uncoded(end_to_end(request.headers)), self.pseudonym), body,
                              None if is_card or bare or receiver else binding_of(request))
        kinds, response = {fault.kind for fault in acting}, None
        try:
            response = printer.send(asked, stream=not is_card)
            if "twice" in kinds:
                _drain(response, self.timeout)
                self.say(f"[fault] twice:{number}: delivered request {number} to {who} a second time; "
                         "the sender gets the second answer")
                response = printer.send(asked, stream=not is_card)
        except TransportError as exc:
            status = 504 if exc.timed_out else 502  # and whether it reached the agent: twice's first copy did
            advice = exc.retry_advice() if response is None else MAY_HAVE_ACTED
            self.say(f"[proxy] finding: request {number} ({request.method} {target[:80]}): {exc}; {advice}; "
                     f"the client gets {status}")
            return HttpResponse(status, {"Content-Type": "text/plain; charset=utf-8"},
                                f"{status}: {who}'s answer could not be forwarded: {exc}; {advice}\n".encode())
        if "drop-response" in kinds:
            _drain(response, self.timeout)
            self.say(f"[fault] drop-response:{number}: {who} answered request {number} ({response.status}); "
                     f"the {'client' if receiver is None else 'agent'}'s connection was closed with no answer")
            raise HangUp
        if 300 <= response.status < 400 and response.status != 304:  # 304: not modified, no redirect
            location = response.header("Location")
            self.say(f"[proxy] finding: request {number}: {who} answered {response.status} " + (
                f"to {location[:120]}; passed on, not followed" if location else "with no Location; passed on"))
        if bare:
            return self._head(response, number, acting, on_card)
        headers, body = with_via(end_to_end(response.headers), self.pseudonym), response.body
        if is_card and response.status == 200:
            body = self._card(body)
        content_type = (response.header("Content-Type") or "").split(";")[0].strip().lower()
        if isinstance(body, (bytes, bytearray)) and response.status == 200 and content_type == "text/event-stream":
            body = iter((bytes(body),))  # a stream sent with its length: its events judged, faults acting, as any
        if not isinstance(body, (bytes, bytearray)):  # a stream: passed on as it arrives (passing.py)
            body = Body(passing.stream(body, number, asked.binding, asked.body, content_type, self.say,
                                       self.faults.cut_after(), acting), lambda completed: hang_up(response.body))
        elif receiver is None:  # the rules judge an agent's answers, not a receiver's
            version, coded = versions.asked(request.header(versions.NAME), request.url).version, response.header("Content-Encoding")
            for line in annotate.notes(annotate.Answer(asked.binding, request.body, response.status, content_type, body,
                                                       version=version, sent_to=(request.method, target.split("?")[0]), coded=coded)):
                self.say(line)
            for line in self.webhooks.refused(asked.body, response.status, body) if self.webhooks is not None else ():
                self.say(line)
            body = self.webhooks.restore(body) if self.webhooks is not None else body
        body = passing.answer(body, number, acting, self.say) if acting and not isinstance(body, Body) else body  # a push's too
        return HttpResponse(response.status, headers, body)

    def _head(self, response: HttpResponse, number: int, acting: list[Any], on_card: bool) -> HttpResponse:
        """A HEAD's answer: the agent's status and headers, no body [RFC 9110 9.3.2], and the length
        its GET would have, but for the card's (the proxy's GET serves it rewritten: another length)."""
        headers, length = with_via(end_to_end(response.headers), self.pseudonym), response.header("Content-Length")
        if length is not None and not on_card:
            headers["Content-Length"] = length  # the server says it for us (server_answer.py)
        for fault in acting:
            if fault.kind in ("drip", "corrupt", "reorder"):
                self.say(f"[fault] {fault.spec}: request {number} is a HEAD, answered with no body: nothing changed")
        return HttpResponse(response.status, headers, b"")

    def _hold(self, headers: dict[str, str], body: bytes) -> None:
        """This request's secrets first (one held already moves up, so a client's token is never
        pushed out by the secrets of its later requests), the most recent MOST_HELD in all; each
        holder gets a list of its own (a printer adds what it sends to it)."""
        now = carried(headers, body)
        if now and self._held[:len(now)] != tuple(now):
            with self._holding:
                self._held = (*now, *(secret for secret in self._held if secret not in now))[:MOST_HELD]
                for holder in self.holders:
                    holder.held = list(self._held)

    def _card(self, body: bytes) -> bytes:
        rewritten = card.rewrite(body, self.agent, self.base)
        first, self._card_said = not self._card_said, True
        if rewritten is None:
            if first:
                self.say(f"[proxy] finding: the card cannot be read ({card.unreadable(body)}): served as the agent sent "
                         "it, its interfaces not moved (a client that follows them bypasses the proxy)")
            return body
        if rewritten.signed and rewritten.changes and first:  # nothing moved: the signature still holds
            self.say("[proxy] the card is signed: rewriting its interfaces breaks its signature"
                     + (" (--keep-card: served unchanged)" if self.keep_card else "; --keep-card serves it unchanged"))
        if rewritten.signed and self.keep_card:
            return body
        if first and rewritten.changes:
            self.say("[proxy] the card, as served through the proxy (its interfaces moved to the proxy):")
            for line in card.diff(rewritten.changes):
                self.say(line)
        if first and rewritten.elsewhere:
            self.say("[proxy] not moved (another origin; a client sending there bypasses the proxy): "
                     + card.listed(rewritten.elsewhere))
        return rewritten.body


def binding_of(request: HttpRequest) -> str:
    """JSON-RPC if the body is a JSON-RPC object, else HTTP+JSON (which names its operation by its path).
    Only which one: a duplicate key or a NaN is for the agent to refuse and annotate.py to judge, so
    the body is read by json alone (the server has bounded its size; deep nesting stops at the
    interpreter's recursion limit), and not at all when it cannot name "jsonrpc" nor be a batch."""
    body = request.body
    if not body or (b'"jsonrpc"' not in body and b"\\u" not in body and not body.lstrip().startswith(b"[")):
        return HTTP_JSON.name
    try:
        document = json.loads(body.decode("utf-8"))  # as a peer reads it: UTF-8, never guessed
    except (ValueError, RecursionError):
        document = None
    return JSONRPC.name if isinstance(document, (dict, list)) and (isinstance(document, list) or "jsonrpc" in document) \
        else HTTP_JSON.name


def _drain(response: HttpResponse, seconds: float) -> None:
    """Read a stream to its end (a dropped or duplicated answer is still read whole from the agent),
    for `seconds` at most: a stream that keeps talking is hung up on then, one that breaks off ends."""
    if not isinstance(response.body, (bytes, bytearray)):
        deadline = time.monotonic() + seconds
        try:
            for _ in response.body:
                if time.monotonic() >= deadline:
                    break
        except TransportError:
            pass  # broken off, or silent past --timeout: read as far as it went
        finally:
            hang_up(response.body)
