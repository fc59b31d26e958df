"""The command line's flags: `a2a_delegation.py [flags]` (FLAGS) and `a2a_delegation.py web
[flags]` (the live page, WEB_FLAGS), as a table.

Each flag is written once, here (and `serve NAME`'s in the peer side's table, handed to
`command_line.parse`): its name, default and help. From them come --help (argparse), the
settings of a run with no flags at all, which never loads argparse (the essay's run has a
start-up budget and nothing to parse), and the names lessons give flags (`dest_of`).
Parsing them, once, into the run's settings is command_line.py's; a bad value is one line
and exit status 2, argparse's own convention (flag_values.py).
"""

from __future__ import annotations

from peers.a2a.bindings import BINDINGS
from peers.a2a.wire_format import CARD_PATH, NAMES, card_url
from peers.support.cli import flag_values as values

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any

HTTP_TIMEOUT = 10.0  # seconds for one whole exchange over HTTP, unless --timeout says


class Flag:
    """One flag's row. A plain class, not a NamedTuple: the default run loads this table,
    and making a NamedTuple's class costs more than the rest of the module (bench/startup.py)."""

    __slots__ = ("name", "default", "help", "group", "options")

    def __init__(self, name: str, default: Any, help: str, group: str = "",
                 options: dict[str, Any] | None = None) -> None:
        self.name = name  # "--registry", or a positional's name
        self.default = default
        self.help = help
        self.group = group  # the --help section
        self.options = options or {}  # more argparse keywords: choices, type, action, metavar

    @property
    def dest(self) -> str:
        return self.options.get("dest") or self.name.lstrip("-").replace("-", "_")


# A file flag's value: a name, never empty (`--replay "$UNSET"` is a mistake said, not the flag left out)
A_FILE, A_PATH, A_TRACE = ({"metavar": name, "type": values.file_name} for name in ("FILE", "PATH", "FILE.jsonl"))
MODEL, LEARN = "letting a model choose the delegation (generate())", "watching, stepping, saving"
LESSONS = "lessons beyond the essay's run"
FLAGS = (
    Flag("--registry", None, "where peers live: a list of Agent Card URLs (default: the "
         "registry.json beside a2a_delegation.py)", options=A_PATH),
    Flag("--allowlist", None, "which peers are trusted, by card name and endpoint (default: "
         "the allowlist.json beside a2a_delegation.py)", options=A_PATH),
    Flag("--credentials", None, 'the support agent\'s tokens, {"tokens": {endpoint: token}}, and other '
         'credentials, {"credentials": {endpoint: {"apiKey" | "basic" | "oauth2" | "clientCertificate": ...}}} '
         "(README: Authentication); each sent only to its own endpoint (default: $A2A_CREDENTIALS)",
         options=A_PATH),
    Flag("--allow-untrusted", [], "delegate to this peer even though it is not allowlisted; its "
         "output is tagged UNTRUSTED and kept apart (repeatable)",
         options={"action": "append", "metavar": "NAME"}),
    Flag("--peer", [], "add an A2A agent to this run: its card URL, or its base URL (the card is "
         f"then at {CARD_PATH}); repeatable; implies --transport http",
         options={"action": "append", "metavar": "URL", "type": values.base_url}),
    Flag("--token-env", None, "the environment variable holding a bearer token for the --peer "
         "agents: sent only to their own origin, never given on the command line",
         options={"metavar": "VAR"}),
    Flag("--transport", "in-process", "in-process: the shim, no sockets (default); http: serve the "
         "demo peers on 127.0.0.1 and talk to every peer over real HTTP; https: the same over real TLS, "
         "each certificate checked (against the demo CA, or --ca)", options={"choices": ["in-process", "http", "https"]}),
    Flag("--ca", None, "trust the https peers whose certificates this CA (a PEM file) issued, instead of the "
         "system's CAs (or, with --transport https, the demo CA)", options=A_FILE),
    Flag("--wire", None, "the A2A wire format: the demo peers serve this card, and the support "
         "agent speaks it to every peer (default: the essay's frames for the demo peers; for "
         "others, what each card declares)", options={"choices": list(NAMES)}),
    Flag("--binding", None, "how frames reach each peer: jsonrpc (one envelope per call, the essay's) or "
         "http+json (A2A 1.0's REST binding: a verb and a path per operation), where its card offers it "
         "(default: JSON-RPC where a card offers it, else HTTP+JSON)", options={"choices": [row.name.lower() for row in BINDINGS]}),
    Flag("--timeout", None, f"how long one exchange with a peer may take (default: {HTTP_TIMEOUT:g} "
         "over HTTP; in process, no limit, so a debugger can stop inside a peer; a lesson may "
         "set its own: --scenario NAME --help says)",
         options={"type": values.seconds, "metavar": "SECONDS"}),
    Flag("--request", None, 'a customer\'s request, e.g. \'Please refund $180 on order ORD-3300\' '
         "(single quotes: in double quotes the shell expands $1): the model (by default an offline "
         "stand-in) picks the peer, skill and input; the trust gate still decides", MODEL,
         {"metavar": "TEXT"}),
    Flag("--generate", None, "use this Python callable, generate(prompt) -> str, as the model",
         MODEL, {"metavar": "MODULE:FUNCTION"}),
    Flag("--llm-url", None, "use an OpenAI-compatible chat-completions endpoint, e.g. "
         "http://localhost:11434/v1", MODEL, {"metavar": "URL", "type": values.base_url}),
    Flag("--llm-model", None, "the model name for --llm-url", MODEL, {"metavar": "NAME"}),
    Flag("--llm-key-env", "OPENAI_API_KEY", "environment variable holding the endpoint's API key "
         "(default: %(default)s; unset means no key)", MODEL, {"metavar": "VAR"}),
    Flag("--llm-timeout", 60.0, "how long to wait for the model: the whole of --llm-url's answer, "
         "or a --generate function's (default: %(default)s)", MODEL,
         {"type": values.seconds, "metavar": "SECONDS"}),
    Flag("--show-prompts", False, "print every prompt and answer, exactly as the model saw them",
         MODEL, {"action": "store_true"}),
    Flag("--scenario", None, "run a lesson beyond the essay's run, by name (--list-scenarios "
         "says what each shows; --scenario NAME --help, what it teaches and how it runs)", LESSONS,
         {"type": values.lesson, "metavar": "NAME"}),
    Flag("--legacy-card-path", False, f"if a card is not at {CARD_PATH}, try "
         "/.well-known/agent.json (A2A 0.2 and earlier), with a warning", options={"action": "store_true"}),
    Flag("--strict-cards", False, "refuse a 1.0 card whose security schemes or requirements are in a dialect an "
         "SDK writes (the JavaScript SDK's oneof form, OpenAPI's, a2a-java's unwrapped ones, 0.3's security), "
         "instead of reading it as A2A 1.0 spells it with a warning", options={"action": "store_true"}),
    Flag("--stream", False, "stream each task, event by event, from a peer whose card offers it "
         "(0.3 and 1.0: message/stream, SendStreamingMessage)", options={"action": "store_true"}),
    Flag("--no-wait", False, "ask the peer for its task at once (returnImmediately), then ask "
         "again (GetTask) until it ends, within --timeout", options={"action": "store_true"}),
    Flag("--push", False, "like --no-wait, but the peer tells a webhook of ours (on 127.0.0.1) "
         "of each change instead of being asked, where its card offers push notifications",
         options={"action": "store_true"}),
    Flag("--interactive", False, "in a lesson where a person decides, you are that person "
         "(--scenario NAME --help says whether it has one)",
         LESSONS, {"action": "store_true"}),
    Flag("--list-scenarios", False, "list the lessons, one line each, in teaching order, and exit", LESSONS,
         {"action": "store_true"}),
    Flag("--step", False, "before each frame leaves, show it and wait: Enter sends it, q stops",
         LEARN, {"action": "store_true"}),
    Flag("--break", False, "stop in the Python debugger before each frame leaves (inspect "
         "`request`; `c` sends it, `q` stops)", LEARN, {"action": "store_true", "dest": "debugger"}),
    Flag("--trace", None, "write every frame, line and trust decision as JSON lines", LEARN,
         A_TRACE),
    Flag("--replay", None, "print a saved trace again as the live run did, with no peers", LEARN,
         A_TRACE),
    Flag("--diagram", None, "draw the run as a sequence diagram: .svg, .html or .mmd (Mermaid)",
         LEARN, A_FILE),
    Flag("--no-color", False, "no colour (also when NO_COLOR is set, TERM is dumb, or output is "
         "not a terminal)", LEARN, {"action": "store_true"}),
    Flag("--verbose", False, "also show each frame's HTTP status, headers (masked) and timing; every frame whole",
         LEARN, {"action": "store_true"}),
    Flag("--frames", None, "full: every frame whole, a card as served (the default of the essay's run and --verbose); "
         "summary: a card as one line, a changed card as the fields that changed, frames a lesson shows again "
         "said in a line (the default of a lesson and --request); --trace keeps every frame whole", LEARN,
         {"choices": ["full", "summary"]}),
    Flag("--quiet", False, "print only the outcome lines", LEARN, {"action": "store_true"}),
)
WEB_FLAGS = (  # `web`: the live page, on 127.0.0.1 only (peers/support/web/)
    Flag("--port", 0, "the page's port on 127.0.0.1 (default: a free one)", options={"type": values.port}),
    Flag("--open", False, "also open the page in the default browser", options={"action": "store_true"}),
    Flag("--allowlist", None, "the allowlist the page edits and saves to when asked (default: the "
         "allowlist.json beside a2a_delegation.py)", options=A_PATH),
)
CHECK_FLAGS = (  # `check URL`: grade an agent by the table of requirements (peers/support/check/)
    Flag("url", None, f"the agent's base URL (its card is then at its origin's {CARD_PATH}, A2A 8.2, "
         "whatever path the URL has) or its card's URL",
         options={"metavar": "URL", "type": values.base_url}),
    Flag("--credentials", None, "the credential store the calling side reads (as a run's --credentials): the "
         "right credential for the declared scheme", options=A_FILE),
    Flag("--other-caller", None, "a second caller's credential store, for the checks across callers (needs --deep: "
         "can caller B see or change caller A's task?)", options=A_FILE),
    Flag("--binding", None, "check only this binding (default: every binding the card declares)",
         options={"choices": [row.name.lower() for row in BINDINGS]}),
    Flag("--deep", False, "also send messages, which may cause effects (point it at a test instance): the "
         "checks that need a task, a stream or a push config", options={"action": "store_true"}),
    Flag("--format", "text", "the report's format: text (about a screen: skips for one reason on one line), "
         "json (a stable schema), junit (CI), "
         "html (one self-contained page)", options={"choices": ["text", "json", "junit", "html"]}),
    Flag("--out", None, "write the report to this file instead of the terminal", options=A_FILE),
    Flag("--card-key", None, "the public JWK a signed card's signatures are verified with (a card's own jku "
         "or jwk is never trusted)", options=A_FILE),
    Flag("--timeout", 5.0, "how long one exchange with the agent may take (default: %(default)s)",
         options={"type": values.seconds, "metavar": "SECONDS"}),
    Flag("--verbose", False, "print every frame as it crosses, as the printer does (secrets masked), and "
         "every verdict's detail", options={"action": "store_true"}),
)
PROXY_FLAGS = (  # `proxy --to URL`: stand between two A2A programs, every frame printed (peers/support/proxy/)
    Flag("--to", None, "the agent's origin (scheme, host and port): every request is forwarded there with its "
         f"own path and query (its card, at {CARD_PATH}, too)", options={"metavar": "URL", "type": values.origin,
                                                                       "required": True}),
    Flag("--port", 0, "the proxy's port on 127.0.0.1 (default: a free one, printed)", options={"type": values.port}),
    Flag("--fault", None, "a fault to make, repeatable: delay:N[:SECONDS], drop-response:N, twice:N, "
         "cut-stream:EVENTS, status:N:CODE, drip:N[:BYTES_PER_SECOND], corrupt:N:FIELD, reorder:N:A:B (N counts requests "
         "from 1, the card's included; '?' draws it from --seed; every event is counted, and a count past what the 1 MiB "
         "a fault reads can hold, 174762, is refused)",
         options={"action": "append", "metavar": "SPEC"}),
    Flag("--seed", 0, "what a '?' in a --fault draws from: one seed, the same faulted frame every time",
         options={"type": int}),
    Flag("--keep-card", False, "serve a signed card unchanged (its interfaces still name the agent)",
         options={"action": "store_true"}),
    Flag("--trace", None, "also write the session's frames and lines to FILE when stopped, its newest 10,000 "
         "records (8 MiB of bodies, lines, URLs and headers); --replay and --diagram read it", options=A_FILE),
    Flag("--timeout", HTTP_TIMEOUT * 3, "how long one exchange with the agent may take; a stream lasts while it "
         "talks, ended once silent this long (default: %(default)s)",
         options={"type": values.seconds, "metavar": "SECONDS"}),
    Flag("--verbose", False, "also show each frame's HTTP status, headers (masked) and timing",
         options={"action": "store_true"}),
    Flag("--step", False, "hold each request before it goes to the agent, and each whole answer before it goes "
         "back, until Enter; q (or end of input) stops holding", options={"action": "store_true"}),
    Flag("--ca", None, "an https agent's certificate is checked against this CA (a PEM file; default: the "
         "system's CAs)", options=A_FILE),
    Flag("--tls", False, "serve https, with the DEMO certificate in peers/keys unless --tls-cert",
         options={"action": "store_true"}),
    Flag("--tls-cert", None, "the proxy's certificate (PEM) for --tls", options=A_FILE),
    Flag("--tls-key", None, "the private key (PEM) of --tls-cert", options=A_FILE),
    Flag("--client-cert", None, "a client certificate the proxy presents to an https agent that asks for one "
         "(mutual TLS ends at the proxy: a client's own cannot pass through)", options=A_FILE),
    Flag("--client-key", None, "the private key (PEM) of --client-cert", options=A_FILE),
    Flag("--webhook", False, "front the client's push receiver too: a push config set through the proxy gets a "
         "URL of the proxy's, and each delivery is printed (and faulted) on its way to the client's",
         options={"action": "store_true"}),
    Flag("--allow-host", None, "also answer requests whose Host is NAME (any port), as an /etc/hosts line that puts "
         "the proxy in a program's path gives it; repeatable. Else only 127.0.0.1 and localhost: a web page could "
         "rebind a name of its own to 127.0.0.1 and act through the proxy", options={
             "action": "append", "metavar": "NAME", "type": values.host_name}),
)
# What `serve NAME`'s flags are is the peer side's to say: main() hands its table to
# `parse` (serve_flags). A serve flag names the kind of its value; its check is here.
KINDS = {"port": values.port, "count": values.count, "base_url": values.base_url, "token": values.token,
         "seconds": values.seconds, "host": values.host, "served_base": values.served_base,
         "extension_uri": values.extension_uri, "file": values.file_name}


def dest_of(flag: str) -> str:
    """The option a run's flag sets: --show-prompts -> show_prompts, --break -> debugger."""
    return next(entry.dest for entry in FLAGS if entry.name == flag)


def peer_card_urls(peers: tuple[str, ...]) -> list[str]:
    """--peer URLs (settings.peer) as card URLs, each card once (keyed as the registry keys a card,
    config.card_key: a base URL and its card URL, or another query, name one card): a base URL gets the
    well-known path."""
    from peers.support.calling.config import card_key
    first: dict[tuple[str, str], str] = {}
    for url in peers:
        first.setdefault(card_key(card_url(url)), card_url(url))
    return list(first.values())


def unlisted(peers: tuple[str, ...], listed: list[str], warn: Any) -> list[str]:
    """The card URLs of --peer agents, each card once and none the registry lists (keyed as it keys a card
    listed twice, config.card_key): asked twice, one ticket would ask two refunds. Each dropped is said in
    one line to `warn`: a warning, not a refusal as a registry's repeat is, since a flag typed again names
    the same agent and what was asked for is plain; a file is edited. A key in a URL's query is masked."""
    from peers.support.calling.config import card_key
    from transports.escaping import escape
    from transports.masking import mask_line
    known = {card_key(url): (url, "the registry lists", "the registry's entry is asked, the --peer dropped")
             for url in listed}
    kept = []
    for peer in peers:
        card = card_url(peer)
        if card_key(card) not in known:
            known[card_key(card)] = (card, "an earlier --peer does", "it is asked once, the repeat dropped")
            kept.append(card)
            continue
        named, by, done = known[card_key(card)]
        # Each URL masked on its own and whole (")" and ":" may be in a key), under any name a secret header may have
        warn(escape(f"--peer {mask_line(peer)[:200]} names the card {by} ({mask_line(named)[:200]}): {done}"))
    return kept

