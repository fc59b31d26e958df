"""Which A2A version a request asks for: its `A2A-Version` service parameter, read once
per request for both bindings (peers/app.py), and what the essay's and 0.3's methods do
under 1.0.

Spec: A2A 1.0 section 3.6. A client sends `A2A-Version: Major.Minor` as a header, or MAY
send it as a request parameter instead (`?A2A-Version=1.0`, 3.6.1). The agent MUST process
the request with the semantics of that Major.Minor, MUST answer VersionNotSupportedError
for one its interface does not serve, and MUST read an empty value as 0.3 (3.6.2); a patch
number MUST NOT be considered (3.6). A major alone (`1`) asks for that major at the latest
minor served, as the official Python SDK takes it (it compares majors only).
Refused, each with one VersionNotSupported that says why: a value that is not plain
Major[.Minor[.Patch]] numbers (`1.0.0.0`, `01.0`, `1.`, `v1`, or two headers, which HTTP
joins as `1.0, 0.3`), the parameter given twice, and a header and a parameter that name
different versions: "instead of a header" means one or the other, and where two disagree
no reading is safe (whatever sat in front of this agent may have judged by the other).
"""

import re

from transports.jsonrpc import MethodNotFound
from transports.records import Record

NAME = "A2A-Version"  # the header's name, and the request parameter's (section 3.6.1)
_LOWER = NAME.lower()
LATEST = {"0": "0.3", "1": "1.0"}  # each major served -> the latest minor served of it
_NUMBER = r"(?:0|[1-9][0-9]{0,3})"  # no leading zero, no sign, ASCII digits only, short
_FORM = rf"({_NUMBER})(?:\.({_NUMBER})(?:\.{_NUMBER})?)?"  # compiled by re at its first use: a plain header never
SHOWN = 24  # how much of a refused value an error message quotes


class Asked(Record):
    version: str | None  # "0.3" or "1.0"; None: none asked, which means 0.3 (section 3.6.2)
    refused: str = ""  # why the version asked for cannot be served; "" where it can


_PLAIN = {None: Asked(None), **{version: Asked(version) for version in LATEST.values()}}  # a header alone


def _parameters(url: str) -> list[tuple[str, str]]:
    """A request URL's query parameters; a URL without a query (nearly every request) loads no
    URL parser (urllib.parse loads ipaddress: a cost on every start-up)."""
    if "?" not in url:
        return []
    from urllib.parse import parse_qsl, urlsplit
    return parse_qsl(urlsplit(url).query, keep_blank_values=True)


def asked(header: str | None, url: str) -> Asked:
    """The version a request asks for: its header, else its request parameter (whichever
    is not empty), as the "Major.Minor" served; or why it is refused."""
    if header in _PLAIN and "?" not in url:  # nearly every request: what the reading below comes to
        return _PLAIN[header]
    named = [value for name, value in _parameters(url) if name.lower() == _LOWER]  # a service parameter's key: any case (3.2.6)
    if len(named) > 1:
        return Asked(None, f"the {NAME} request parameter is given {len(named)} times; give it once")
    sent = [("header", header), *(("request parameter", value) for value in named)]
    given = [(where, value.strip(" \t")) for where, value in sent if value is not None and value.strip(" \t")]
    readings = [(where, value, served(value)) for where, value in given]
    for where, value, version in readings:
        if version is None:
            again = "; a header sent twice arrives joined by a comma" if "," in value else ""
            return Asked(None, f"{NAME} {_shown(value)} ({where}) is not a version: send Major.Minor, like 1.0{again}")
    if len({version for _, _, version in readings}) > 1:
        return Asked(None, f"the {NAME} header ({_shown(readings[0][1])}) and request parameter "
                           f"({_shown(readings[1][1])}) differ; send one of them")
    if not readings:
        return Asked(None)
    version = readings[0][2]
    if version not in LATEST.values():
        return Asked(None, f"{NAME} {_shown(readings[0][1])} is not served here: this agent speaks "
                           f"{' and '.join(sorted(LATEST.values()))}")
    return Asked(version)


def served(value: str) -> str | None:
    """"Major.Minor" for a well-formed value (a patch dropped, a major alone completed with
    the latest minor served of it, or ".0" where none is); None for anything else."""
    form = re.fullmatch(_FORM, value)
    if form is None:
        return None
    major, minor = form.groups()
    return f"{major}.{minor}" if minor is not None else LATEST.get(major, f"{major}.0")


def before_1_0(requested: str | None) -> None:
    """check_version of the essay's and 0.3's methods: answered with no version (which means
    0.3) or 0.3; under 1.0 their names are no method at all, so -32601, as a 1.0 agent
    answers any name it lacks (section 3.6.2: the semantics of the version asked for)."""
    if requested == "1.0":
        raise MethodNotFound(f"A2A 1.0 (asked for with {NAME}: 1.0) has no method of this name; it is "
                             "an older version's. 1.0 spells its methods in PascalCase, like SendMessage")


def _shown(value: str) -> str:
    return repr(value[:SHOWN] + ("..." if len(value) > SHOWN else ""))
