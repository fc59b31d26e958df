"""The workbench's options, and what they switch on: the model, recording, stepping.

Kept out of a2a_delegation.py so that file stays the essay's story. The flags themselves
are defined in peers/flags.py, loaded only when there are flags: the essay's run has a
start-up budget of 1.5x a bare interpreter and nothing to parse.
"""
from __future__ import annotations

import os
from contextlib import contextmanager
from typing import NamedTuple


class Options(NamedTuple):
    command: str = "run"  # or "serve"
    registry: str = "registry.json"
    allowlist: str = "allowlist.json"
    credentials: str | None = None  # path of the support agent's token file
    allow_untrusted: tuple[str, ...] = ()
    transport: str = "in-process"
    wire: str | None = None  # "essay", "0.3" or "1.0"; None: as each card declares
    timeout: float = 10.0
    request: str | None = None  # a customer's words: the model chooses the delegation
    generate: str | None = None  # module:function
    llm_url: str | None = None  # an OpenAI-compatible endpoint
    llm_model: str | None = None
    llm_key_env: str = "OPENAI_API_KEY"
    llm_timeout: float = 60.0
    show_prompts: bool = False
    scenario: str | None = None  # "injection"
    step: bool = False
    debug: bool = False  # --break
    trace: str | None = None
    replay: str | None = None
    diagram: str | None = None
    no_color: bool = False
    verbose: bool = False
    quiet: bool = False
    peer: str = ""  # serve: which peer
    host: str = "127.0.0.1"
    port: int = 0
    url: str | None = None  # serve: the base URL the card advertises
    token: str | None = None


def parse(argv: list[str]) -> Options:
    if not argv:  # the essay's run: nothing to parse, so argparse is never loaded
        return Options(credentials=os.environ.get("A2A_CREDENTIALS"))
    from peers import flags
    return flags.parse(argv, Options)


def generator(options: Options):
    """The generate() the run uses: a plugged callable, an endpoint, or a stand-in."""
    from peers import generate
    from peers.config import ConfigError
    if options.generate:
        try:
            return generate.load(options.generate)
        except generate.GenerateError as exc:  # a bad flag: input, like a bad data file
            raise ConfigError(str(exc)) from None
    if options.llm_url:
        return generate.openai_compatible(options.llm_url, options.llm_model,
                                          api_key_env=options.llm_key_env,
                                          timeout=options.llm_timeout)
    return generate.gullible if options.scenario == "injection" else generate.stand_in


@contextmanager
def session(options: Options, cards: list[str], credentials: dict[str, str], say):
    """Everything a run needs around the story: the demo peers behind the chosen
    transport, the frame printer wrapping it (with --step/--break inside it and a
    --trace/--diagram recorder listening), and the support agent's options."""
    from peers import demo, wires
    from transports.printer import FramePrinter
    card_wire = wires.wire(options.wire or "essay")  # the card the demo peers serve
    with demo.transport(options.transport, card_wire, timeout=options.timeout,
                        scenario=options.scenario) as (inner, provisioned), \
            recording(options, inner.label, cards) as recorder:
        printer = FramePrinter(stepping(options, inner), say, verbose=options.verbose,
                               observe=recorder and recorder.frame)
        yield printer, dict(credentials={**provisioned, **credentials},
                            allow_untrusted=options.allow_untrusted,
                            notify=recorder and recorder.event,
                            wire=wires.wire(options.wire) if options.wire else None)


@contextmanager
def recording(options: Options, transport: str, cards: list[str]):
    """A Recorder while --trace or --diagram asks for one (else None); the files are
    written when the run ends, however it ends, so nothing recorded is lost."""
    if not (options.trace or options.diagram):
        yield None
        return
    from peers import diagram, output, trace
    recorder = trace.Recorder(transport)
    recorder.event("registry", path=options.registry, cards=cards)
    output.Settings.listeners.append(recorder.line)
    try:
        yield recorder
    finally:
        output.Settings.listeners.remove(recorder.line)
        if options.trace:
            recorder.write(options.trace)
        if options.diagram:
            diagram.write(options.diagram, recorder.resolved())


def stepping(options: Options, inner):
    """The transport, wrapped for --step or --break when asked."""
    if not (options.step or options.debug):
        return inner
    from transports.stepping import Stepper
    return Stepper(inner, debugger=options.debug)
