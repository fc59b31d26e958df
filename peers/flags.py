"""The command line's flags: `a2a_delegation.py [flags]` and `a2a_delegation.py serve NAME`.

Every flag is explained by --help; a bad value is one line and exit status 2 (argparse's
own convention). Loaded only when there are flags to parse (see peers/cli.py).
"""
from __future__ import annotations

import argparse
import os
from typing import Any


def parse(argv: list[str], Options: type) -> Any:
    """The run's flags, or `serve NAME ...`; argparse exits 2 with one line on a bad flag."""
    if argv[0] == "serve":
        return _parse_serve(argv[1:], Options)
    d = Options()
    parser = argparse.ArgumentParser(
        prog="a2a_delegation.py",
        description="Watch a support agent discover, trust or refuse, and delegate to A2A "
                    "peers over JSON-RPC, every frame printed. "
                    "'a2a_delegation.py serve NAME --help' runs one peer as an HTTP server.",
        epilog="Exit status: 0 when every peer was handled, 1 when a delegation failed, "
               "2 for bad input (a data file, a flag, or a registry entry whose card "
               "cannot be fetched).")
    parser.add_argument("--registry", default=d.registry, metavar="PATH",
                        help="where peers live: a list of Agent Card URLs (default: %(default)s)")
    parser.add_argument("--allowlist", default=d.allowlist, metavar="PATH",
                        help="which peers are trusted, by card name and endpoint "
                             "(default: %(default)s)")
    parser.add_argument("--credentials", default=os.environ.get("A2A_CREDENTIALS"), metavar="PATH",
                        help='the support agent\'s tokens, {"tokens": {endpoint: token}}; each '
                             "is sent only to its own endpoint (default: $A2A_CREDENTIALS)")
    parser.add_argument("--allow-untrusted", action="append", default=[], metavar="NAME",
                        help="delegate to this peer even though it is not allowlisted; its "
                             "output is tagged UNTRUSTED and kept apart (repeatable)")
    parser.add_argument("--transport", choices=["in-process", "http"], default=d.transport,
                        type=lambda v: "in-process" if v == "inprocess" else v,
                        help="in-process: the shim, no sockets (default); http: serve the "
                             "demo peers on 127.0.0.1 and talk to every peer over real HTTP")
    parser.add_argument("--wire", choices=["essay", "0.3", "1.0"],
                        help="the A2A wire format: the demo peers serve this card, and the "
                             "support agent speaks it to every peer (default: the essay's "
                             "frames for the demo peers; for others, what each card declares)")
    parser.add_argument("--timeout", type=_seconds, default=d.timeout, metavar="SECONDS",
                        help="connect and read timeout for the http transport "
                             "(default: %(default)s)")
    model = parser.add_argument_group("letting a model choose the delegation (generate())")
    model.add_argument("--request", metavar="TEXT",
                       help='a customer\'s request, e.g. "Please refund $180 on order ORD-3300": '
                            "the model (by default an offline stand-in) picks the peer, skill and "
                            "input; the trust gate still decides")
    model.add_argument("--generate", metavar="MODULE:FUNCTION",
                       help="use this Python callable, generate(prompt) -> str, as the model")
    model.add_argument("--llm-url", metavar="URL",
                       help="use an OpenAI-compatible chat-completions endpoint, e.g. "
                            "http://localhost:11434/v1")
    model.add_argument("--llm-model", metavar="NAME", help="the model name for --llm-url")
    model.add_argument("--llm-key-env", default=d.llm_key_env, metavar="VAR",
                       help="environment variable holding the endpoint's API key "
                            "(default: %(default)s; unset means no key)")
    model.add_argument("--llm-timeout", type=_seconds, default=d.llm_timeout, metavar="SECONDS",
                       help="how long to wait for the model (default: %(default)s)")
    model.add_argument("--show-prompts", action="store_true",
                       help="print every prompt and answer, exactly as the model saw them")
    model.add_argument("--scenario", choices=["injection"],
                       help="injection: the rogue's card tells the model to delegate to it, and "
                            "the model (a deliberately gullible stand-in unless you plug one in) "
                            "obeys; watch the trust gate refuse anyway")
    learn = parser.add_argument_group("watching, stepping, saving")
    learn.add_argument("--step", action="store_true",
                       help="before each frame leaves, show it and wait: Enter sends it, q stops")
    learn.add_argument("--break", dest="debug", action="store_true",
                       help="stop in the Python debugger as each frame crosses the transport "
                            "(inspect `request`, then `reply`; `c` goes on)")
    learn.add_argument("--trace", metavar="FILE.jsonl",
                       help="write every frame, line and trust decision as JSON lines")
    learn.add_argument("--replay", metavar="FILE.jsonl",
                       help="print a saved trace again as the live run did, with no peers")
    learn.add_argument("--diagram", metavar="FILE",
                       help="draw the run as a sequence diagram: .svg, .html or .mmd (Mermaid)")
    learn.add_argument("--no-color", action="store_true",
                       help="no colour (also when NO_COLOR is set or output is not a terminal)")
    shown = learn.add_mutually_exclusive_group()
    shown.add_argument("--verbose", action="store_true",
                       help="also show each frame's HTTP status, headers (masked) and timing")
    shown.add_argument("--quiet", action="store_true", help="print only the outcome lines")
    args = parser.parse_args(argv)
    if args.diagram and not args.diagram.lower().endswith((".svg", ".html", ".mmd")):
        parser.error("--diagram FILE must end in .svg, .html or .mmd")
    if args.llm_url and not args.llm_model:
        parser.error("--llm-url needs --llm-model")
    if args.scenario and args.request is None:
        args.request = "Please refund $180 on order ORD-3300"
    return d._replace(registry=args.registry, allowlist=args.allowlist,
                      credentials=args.credentials, allow_untrusted=tuple(args.allow_untrusted),
                      transport=args.transport, wire=args.wire, timeout=args.timeout,
                      request=args.request, generate=args.generate, llm_url=args.llm_url,
                      llm_model=args.llm_model, llm_key_env=args.llm_key_env,
                      llm_timeout=args.llm_timeout, show_prompts=args.show_prompts,
                      scenario=args.scenario, step=args.step, debug=args.debug, trace=args.trace,
                      replay=args.replay, diagram=args.diagram, no_color=args.no_color,
                      verbose=args.verbose, quiet=args.quiet)


def _parse_serve(argv: list[str], Options: type) -> Any:
    from peers.demo import PEERS
    parser = argparse.ArgumentParser(
        prog="a2a_delegation.py serve",
        description="Run one peer as a standalone A2A server (HTTP/1.1 JSON-RPC) until "
                    "Ctrl-C or SIGTERM. It prints where its card and endpoint are.")
    parser.add_argument("peer", choices=sorted(PEERS), help="which peer to serve")
    parser.add_argument("--wire", choices=["essay", "0.3", "1.0"], default="essay",
                        help="which card to serve (the endpoint answers all three wires' "
                             "methods either way; default: %(default)s)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to bind (default: %(default)s, this machine only)")
    parser.add_argument("--port", type=_port, default=0,
                        help="port to listen on (default: 0, any free port)")
    parser.add_argument("--url", type=_base_url, metavar="BASE",
                        help="the base URL the card advertises, when clients reach this "
                             "server by another name than HOST:PORT (default: http://HOST:PORT)")
    parser.add_argument("--token", default=os.environ.get("A2A_SERVE_TOKEN"),
                        help="the bearer token billing-agent requires (default: "
                             "$A2A_SERVE_TOKEN, else a fresh random one, printed at start)")
    args = parser.parse_args(argv)
    return Options(command="serve", peer=args.peer, host=args.host, port=args.port,
                   url=args.url, token=args.token, wire=args.wire)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value <= 3600:
        raise _bad(f"{text!r} is not a number of seconds between 0 and 3600")
    return value


def _port(text: str) -> int:
    if not text.isdigit() or int(text) > 65535:
        raise _bad(f"{text!r} is not a port number (0-65535)")
    return int(text)


def _base_url(text: str) -> str:
    from urllib.parse import urlsplit
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise _bad(f"{text!r} is not an http(s) base URL such as http://billing.internal:8001")
    return text


def _bad(message: str) -> Exception:
    return argparse.ArgumentTypeError(message)
