"""The server's half of HTTP/1.1 (RFC 9112), sans-IO: judge a request head, write a reply head.

`head_end()` finds where a request head ends in the bytes received so far, `parse_head()`
turns it into a `Head`, and both raise `Refusal(status, why)` for a request that must not
be served; `response_head()` writes the status line and headers of an answer. Nothing
here touches a socket, so each rule is tested with plain bytes (tests/test_server_hardening.py).
`http11.py` is the client's half, and lends its character classes and limits.

Strict on purpose: where two programs could read the same bytes two ways (smuggling one
request inside another), the request is refused instead.
- Request line: `METHOD SP target SP HTTP/1.x` [3], single spaces. The target is origin-form
  [3.2.1]: "/" then visible ASCII, no "#", at most MAX_TARGET bytes (414); or absolute-form
  [3.2.2], served as its path with its authority as Host. Else 400; versions other than 1.0
  and 1.1 are 505.
- Lines end in CRLF (a bare LF is 400 at once, not waited on). Head at most MAX_HEAD bytes
  and MAX_HEADERS lines (431). Names are tokens, values hold no control character but tab
  (so no NUL, no lone CR or LF), no obs-fold [5.2] (400). Names reach the app lower-cased;
  a repeated one is joined with ", " [RFC 9110 5.3] (Cookie with "; "), except Host and the framing headers.
- Framing [6]: HTTP/1.1 needs exactly one Host [3.2] (400). One framing only [6.3]: both
  Content-Length and Transfer-Encoding is 400 (the pair is how requests get smuggled), as
  is Transfer-Encoding in HTTP/1.0 [6.1] or with chunked not last, or twice; a coding other
  than chunked is 501. A chunked body is read as it arrives (chunked_body.py), handed to the
  app as if it had come with a Content-Length [7.1.3]. Content-Length is 1 to 18 ASCII
  digits, one header, at most `max_body` (413, before any of the body is read). POST with
  neither is 411; GET, HEAD or DELETE with a body (or chunked) is 400 (RFC 9110 9.3.1: a
  body there has no meaning, so it can only hide one).
- HEAD [RFC 9110 9.3.2] is answered wherever GET is, as GET without the body (the app is
  asked a GET: server_answer.py); so an Allow that names GET names HEAD too. An app that
  answers HEAD itself (a proxy, which forwards it) names the length its GET would have.
"""

import re
import time
from http import HTTPStatus

from transports.http11 import COOKIES_APART, DIGITS, FIELD_VALUE, MAX_HEAD, MAX_HEADERS, TOKEN
from transports.records import Record
from transports.seconds import written_once_a_second

MAX_TARGET = 8 * 1024
METHODS = ("GET", "HEAD", "POST", "PUT", "DELETE", "PATCH")  # answered (HEAD as GET); others 501
_VERSION = re.compile(r"HTTP/[0-9]\.[0-9]")
_ORIGIN_FORM = re.compile(r"/[!-\"$-~]*")  # visible ASCII but "#": no fragment on the wire
# Absolute-form [3.2.2]: http(s)://authority, then origin-form's characters. No userinfo ("@"):
# RFC 9110 4.2.4 calls it an error in a request. Its path is served; its authority becomes Host.
_ABSOLUTE_FORM = re.compile(r"(?i:https?)://((?:\[[0-9A-Fa-f:.]+\]|[!$&-.0-9;=A-Z_a-z~]+)(?::[0-9]{1,5})?)([/?][!-\"$-~]*)?")
_ONE_ONLY = ("host", "content-length", "transfer-encoding")
# Header lines that each pass the checks below (a token, a colon, a value of TOKEN's and
# FIELD_VALUE's characters), CRLF between them: judged in one pass for the usual head.
_FIELD = rf"{TOKEN.pattern}:{FIELD_VALUE.pattern}"
_FIELDS = re.compile(rb"%s(?:\r\n%s)*" % (_FIELD.encode("latin-1"), _FIELD.encode("latin-1")))


class Refusal(Exception):
    """The request cannot be served as sent: answer `status`, then close the connection."""

    def __init__(self, status: int, why: str) -> None:
        super().__init__(why)
        self.status, self.why = status, why


class Head(Record):
    method: str
    target: str  # origin-form: path and query
    version: str  # "HTTP/1.0" or "HTTP/1.1"
    headers: dict[str, str]  # lower-case names
    length: int  # body bytes after the head
    keep_alive: bool
    expect_continue: bool  # the client waits for "100 Continue" before sending its body
    chunked: bool = False  # the body comes chunked (Transfer-Encoding: chunked); `length` is 0 until read


def head_end(buffer: bytearray) -> int | None:
    """Where the head ends (the index of its empty line), or None while more must come."""
    if buffer.startswith(b"\x16\x03"):  # a TLS handshake record (no method starts so): its stray LF read as a bare one
        raise Refusal(400, "a TLS handshake: this port serves plain HTTP (http://, not https://)")
    end = buffer.find(b"\r\n\r\n")
    if 0 <= end <= MAX_HEAD:
        return end
    if end < 0 and len(buffer) <= MAX_HEAD:
        if buffer.count(b"\n") != buffer.count(b"\r\n"):  # else we would wait for a CRLF
            raise Refusal(400, "lines must end with CRLF, not a bare LF")
        return None
    if b"\r\n" not in buffer[:MAX_HEAD]:
        raise Refusal(414, f"the request line is over {MAX_HEAD} bytes")
    raise Refusal(431, f"the request head is over {MAX_HEAD} bytes")


def origin_form(target: str) -> tuple[str, str | None]:
    """An absolute-form target as the path it names and its authority (a server MUST accept it
    [3.2.2]: served as its path, its authority the Host); any other target as it is, and None."""
    absolute = _ABSOLUTE_FORM.fullmatch(target) if target[:1] != "/" else None
    if absolute is None:
        return target, None
    path = absolute[2] or "/"
    return (path if path[:1] == "/" else "/" + path), absolute[1]  # "http://h?q" asks for "/?q"


def parse_head(head: bytes, max_body: int) -> Head:
    """The head's bytes, without the empty line that ends it, judged by the rules above."""
    line, *fields = head.decode("latin-1").split("\r\n")  # any byte decodes; patterns judge
    parts = line.split(" ")
    if len(parts) != 3:
        raise Refusal(400, "the request line must be: METHOD /path HTTP/1.1")
    method, target, version = parts
    if not _VERSION.fullmatch(version):
        raise Refusal(400, "malformed HTTP version")
    if version not in ("HTTP/1.1", "HTTP/1.0"):
        raise Refusal(505, "only HTTP/1.0 and HTTP/1.1 are supported")
    if not TOKEN.fullmatch(method):
        raise Refusal(400, "malformed method")
    if len(target) > MAX_TARGET:
        raise Refusal(414, f"the request target is over {MAX_TARGET} bytes")
    target, authority = origin_form(target)
    if not _ORIGIN_FORM.fullmatch(target):
        raise Refusal(400, "the request target must be a path starting with /, or an http(s) URL")
    if len(fields) > MAX_HEADERS:
        raise Refusal(431, f"more than {MAX_HEADERS} header lines")
    headers: dict[str, str] = {}
    well_formed = _FIELDS.fullmatch(head, len(line) + 2) is not None  # every line at once; if not, each says why
    for field in fields:
        if not well_formed and field[:1] in (" ", "\t"):
            raise Refusal(400, "a header folded onto a second line (obs-fold) is not accepted")
        name, colon, value = field.partition(":")
        value = value.strip(" \t")
        if not well_formed and (not colon or not TOKEN.fullmatch(name) or not FIELD_VALUE.fullmatch(value)):
            raise Refusal(400, "malformed header line")
        name = name.lower()
        if name not in headers:
            headers[name] = value
        elif name in _ONE_ONLY:
            raise Refusal(400, f"more than one {name} header")
        else:  # Cookie's pairs are parted by "; " (RFC 6265 5.4, as RFC 9113 8.2.3 joins them)
            headers[name] += ("; " if name == "cookie" else ", ") + value

    if version == "HTTP/1.1" and "host" not in headers:
        raise Refusal(400, "HTTP/1.1 requires a Host header")
    if authority is not None:  # the received Host is ignored for the target's [3.2.2]
        headers["host"] = authority
    chunked = _chunked(headers, version)
    length_text = headers.get("content-length")
    if length_text is None:
        if method == "POST" and not chunked:
            raise Refusal(411, "Content-Length is required")
        length = 0
    elif len(length_text) > 18 or not DIGITS.fullmatch(length_text):  # int() takes "+1", "²"
        raise Refusal(400, "Content-Length must be 1 to 18 ASCII digits")
    else:
        length = int(length_text)
    if length > max_body:
        raise Refusal(413, f"body larger than {max_body} bytes")
    if (length or chunked) and method in ("GET", "HEAD", "DELETE"):
        raise Refusal(400, f"a {method} request has no body")
    if method not in METHODS:
        raise Refusal(501, f"method {method} is not supported")
    expect = headers.get("expect")
    if expect is not None and expect.lower() != "100-continue":
        raise Refusal(417, "the only expectation supported is 100-continue")
    tokens = {token.strip().lower() for token in headers.get("connection", "").split(",")}
    keep_alive = "close" not in tokens if version == "HTTP/1.1" else "keep-alive" in tokens
    return Head(method, target, version, headers, length, keep_alive,
                expect is not None and version == "HTTP/1.1", chunked)


def _chunked(headers: dict[str, str], version: str) -> bool:
    """Whether the body comes chunked; Refusal for a Transfer-Encoding not to be trusted [6.1, 6.3]."""
    if "transfer-encoding" not in headers:
        return False
    codings = [coding.strip(" \t").lower() for coding in headers["transfer-encoding"].split(",")]
    if "content-length" in headers:
        raise Refusal(400, "both Content-Length and Transfer-Encoding: one framing only")
    if version == "HTTP/1.0":
        raise Refusal(400, "Transfer-Encoding in an HTTP/1.0 request")
    if codings[-1] != "chunked" or "chunked" in codings[:-1]:
        raise Refusal(400, "chunked must be the last transfer coding, and only once")
    if len(codings) > 1:
        raise Refusal(501, "the only transfer coding supported is chunked")
    return True


_REASONS = {status.value: status.phrase for status in HTTPStatus}
_FRAMING = ("content-length", "transfer-encoding", "connection")  # ours to write, not the app's
_DAYS = "Mon Tue Wed Thu Fri Sat Sun".split()  # not strftime: its names follow the locale
_MONTHS = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()


def response_head(status: int, headers: dict[str, str], length: int | None, *, close: bool,
                  http10: bool = False, body_follows: bool = True) -> bytes:
    """Status line and headers. `length` None: a body of unknown length follows, chunked
    for HTTP/1.1, ended by closing for HTTP/1.0 (the caller passes close=True then).
    `body_follows` False (a HEAD an app answered itself): no framing is said without a length."""
    lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Unknown')}"]
    if not any(name.lower() == "date" for name in headers):  # a proxy passes the origin's on [RFC 9110 6.6.1]
        lines.append(f"Date: {_date()}")
    for name, value in headers.items():
        lowered = name.lower()
        if lowered not in _FRAMING:  # Set-Cookie's values, kept apart, each on its own line
            lines += [f"{name}: {_with_head(value) if lowered == 'allow' else each}"
                      for each in (value.split(COOKIES_APART) if lowered == "set-cookie" else (value,))]
    if status in (204, 304):
        pass  # never a body, so never a length [RFC 9110 8.6]
    elif length is not None:
        lines.append(f"Content-Length: {length}")
    elif not http10 and body_follows:
        lines.append("Transfer-Encoding: chunked")
    if close:
        lines.append("Connection: close")
    elif http10:
        lines.append("Connection: keep-alive")  # HTTP/1.0 closes unless told otherwise
    text = "\r\n".join(lines) + "\r\n\r\n"
    if text.count("\n") != len(lines) + 1 or text.count("\r") != len(lines) + 1:
        raise ValueError("a response header holds a line break")  # header injection
    return text.encode("latin-1")


def named_length(value: str | None) -> int | None:
    """A Content-Length an app named (for a HEAD it answered itself), if it is one: 1 to 18 ASCII digits."""
    return int(value) if value is not None and len(value) <= 18 and DIGITS.fullmatch(value) else None


def _with_head(allow: str) -> str:
    """An Allow naming GET names HEAD too: this server answers HEAD wherever GET is."""
    verbs = [verb.strip() for verb in allow.split(",")]
    return allow + ", HEAD" if "GET" in verbs and "HEAD" not in verbs else allow


def _http_date(now: float) -> str:
    """`now`, as HTTP writes a date (RFC 9110 5.6.7): Sun, 06 Nov 1994 08:49:37 GMT."""
    parts = time.gmtime(now)
    return (f"{_DAYS[parts.tm_wday]}, {parts.tm_mday:02d} {_MONTHS[parts.tm_mon - 1]} "
            f"{parts.tm_year} {parts.tm_hour:02d}:{parts.tm_min:02d}:{parts.tm_sec:02d} GMT")


_DATED = written_once_a_second(_http_date)  # every answer within a second carries the same Date


def _date() -> str:
    return _DATED()[1]
