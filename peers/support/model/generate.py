"""generate(prompt: str) -> str: the one hook a model plugs into.

Essay: "a real LLM driving the delegation decisions through generate() ... one step
away". Three ways to fill it:
- `stand_in`: offline and deterministic, the default. It reads the fenced data as data
  (JSON), takes the first peer offering a refund skill, and reads the order and amount
  from the customer's words. No model, no network.
- `gullible`: the same, except that it obeys any "delegate to NAME" it finds anywhere,
  the way a model falls for prompt injection. `--scenario injection` uses it to show that
  a fooled model still cannot pass the trust gate.
- `load("module:function")` for any Python callable, and `openai_compatible(url, model)`
  for any OpenAI-compatible chat-completions endpoint (standard library only).
Every failure is a GenerateError with one clear sentence.
"""
from __future__ import annotations

import json
import os
import re
import sys
import threading
from importlib import import_module
from types import ModuleType

from peers.contracts.refund_text import read_refund
from peers.support.model.prompts import CLOSE, DECIDE, OPEN, ModelStepFailed
from transports.errors import let_quit

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Protocol
else:  # an interface below is a documented class at run time, and typing's Protocol to a checker
    Protocol = object

class Generate(Protocol):
    """The one hook a model plugs into: a prompt in, the model's text out."""

    def __call__(self, prompt: str) -> str: ...


MAX_ANSWER = 1 << 22  # bytes of a model endpoint's answer: 4 MiB, far more than a decision takes
STAND_IN_READS = ("the offline stand-in reads one order id like ORD-3300 and one amount like "
                  "$180 from the request; plug in a model with --generate or --llm-url")


class GenerateError(ModelStepFailed):
    """The model could not be reached, loaded, or answered something unusable."""


def said(exc: BaseException, most: int = 200) -> str:
    """What a hook's exception says, cut: a plugged-in model's code may raise with any message,
    of any length, or one whose reading itself fails."""
    try:
        text = str(exc)
    except Exception:  # noqa: BLE001 (its __str__ is the hook's code, and failed)
        return "(its message could not be read)"
    return text[:most] + ("..." if len(text) > most else "")


def stand_in(prompt: str) -> str:
    blocks = _fenced(prompt)
    if DECIDE not in prompt:  # a summary prompt: report the result, quoted as a claim
        return f"About your request: the refund service reports {json.dumps(blocks[-1])}."
    request, peers = blocks[0], blocks[1]
    refunders = [p for p in peers for s in p["skills"]
                 if "refund" in (s["id"] + s["description"]).lower()]
    if not refunders:
        return '{"error": "no peer offers refunds"}'
    return json.dumps(_refund_choice(request, refunders[0]["peer"]))


def gullible(prompt: str) -> str:
    ordered = re.search(r"delegate to ([A-Za-z0-9_.-]+)", prompt, re.IGNORECASE)
    if DECIDE in prompt and ordered:  # obeys text it should only have read
        return json.dumps(_refund_choice(_fenced(prompt)[0], ordered.group(1).rstrip(".")))
    return stand_in(prompt)


def _refund_choice(request: str, peer: str) -> dict[str, Any]:
    return {"peer": peer, "skill": "process_refund", "input": read_refund(request)}


def _fenced(prompt: str) -> list[Any]:
    """The JSON inside each UNTRUSTED DATA block, in order (the stand-in reads data as data)."""
    head = OPEN.split("{label}")[0]
    values = []
    for chunk in prompt.split(head)[1:]:
        body = chunk.split(">>>\n", 1)[1].split("\n" + CLOSE, 1)[0]
        values.append(json.loads(body))
    return values


def load(spec: str) -> Generate:
    """'package.module:function' (importable from here) or 'path/to/file.py:function'."""
    module_name, _, attribute = spec.rpartition(":")
    if not module_name or not attribute:
        raise GenerateError(f"--generate wants module:function or file.py:function, not {spec!r}")
    try:
        module = _from_file(module_name) if module_name.endswith(".py") else import_module(module_name)
        function = getattr(module, attribute)
    except ImportError as exc:
        raise GenerateError(f"cannot import {module_name!r}: {exc} (give an importable module "
                            "name, or the path of a .py file)") from None
    except AttributeError:
        raise GenerateError(f"{module_name!r} has no {attribute!r}") from None
    except Exception as exc:  # the module's own code failed while loading: say which, in one line
        let_quit(exc)
        raise GenerateError(f"loading {module_name!r} failed: {exc.__class__.__name__}: {said(exc)}") from None
    if not callable(function):
        raise GenerateError(f"{spec} is not callable")
    return function


def _from_file(path: str) -> ModuleType:
    import importlib.util
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    if spec is None or spec.loader is None or not os.path.isfile(path):
        raise ImportError(f"no such file: {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def from_settings(settings: Any, offline: Generate | None = None) -> Generate:
    """The generate() a run's settings (--generate, --llm-*) ask for: a plugged callable, an
    endpoint, or an offline stand-in (`offline`, the one a lesson chose, else `stand_in`)."""
    if settings.generate:
        return within(load(settings.generate), settings.llm_timeout, settings.generate)
    if settings.llm_url:  # over https, trusting the CA --ca names, as a peer's certificate is checked
        from peers.support.calling.credentials import trusting
        tls = None
        if settings.ca is not None:  # the system's CAs and --ca's: a hosted model's certificate, and a local one's
            trusting(settings.ca)  # a file that cannot be used: one line, now
            tls = trusting(None)
            tls.load_verify_locations(settings.ca)
        return openai_compatible(settings.llm_url, settings.llm_model,
                                 api_key_env=settings.llm_key_env, timeout=settings.llm_timeout, tls=tls)
    return offline or stand_in


def within(function: Generate, seconds: float, name: str) -> Generate:
    """A plugged-in generate() held to the run's deadline for the model (--llm-timeout), as
    the endpoint client is: called in a thread of its own, waited for `seconds`, then left
    (a daemon: it ends with the run) and said as a failure. Whatever it raises is its
    failure too, SystemExit included: a hook cannot end the run as if it had succeeded.
    Under a debugger (any tracer: coverage's too) it is called here, in this thread, with no
    deadline, so that a step goes into it."""
    def generate(prompt: str) -> str:
        if sys.gettrace() is not None:
            return function(prompt)
        outcome: list[Any] = []

        def run() -> None:
            try:
                outcome.append((True, function(prompt)))
            except BaseException as exc:  # noqa: BLE001 (carried to the caller's thread, which judges it)
                outcome.append((False, exc))
        worker = threading.Thread(target=run, name="generate", daemon=True)
        worker.start()
        worker.join(seconds)
        if not outcome:
            raise GenerateError(f"{name} gave no answer within {seconds:g}s (--llm-timeout says how long to wait)")
        answered, value = outcome[0]
        if answered:
            return value
        if not isinstance(value, Exception):  # SystemExit, KeyboardInterrupt (ours come to this thread), any other
            raise GenerateError(f"{name} raised {value.__class__.__name__}({said(value)})") from None
        raise value
    return generate


def openai_compatible(url: str, model: str, *, api_key_env: str = "OPENAI_API_KEY",
                      timeout: float = 60.0, tls: Any = None) -> Generate:
    """A chat-completions client: POST {url}/chat/completions, one user message. Over the
    workbench's own transport (transports/network.py), not urllib: `timeout` bounds the whole
    exchange, so an endpoint dripping a byte a second cannot hold the run past it, and a
    redirect is never followed, so the key never goes to a host it was not given for."""
    from transports.codec import LIMITS, loads_strict
    from transports.errors import TransportError
    from transports.masking import mask_body
    from transports.network import HttpTransport
    # The path below the base, its query kept after it (Azure's ?api-version=); a fragment is never sent.
    base, _, query = url.split("#", 1)[0].partition("?")
    endpoint = base.rstrip("/") + "/chat/completions" + (f"?{query}" if query else "")

    def generate(prompt: str) -> str:
        body = json.dumps({"model": model, "temperature": 0,
                           "messages": [{"role": "user", "content": prompt}]}).encode()
        headers, key = {"Content-Type": "application/json"}, os.environ.get(api_key_env)
        if key:
            if not key.isascii() or not key.isprintable():  # no HTTP header can carry it
                raise GenerateError(f"${api_key_env} holds a character no HTTP header can carry (a newline?): "
                                    "set it to the key alone")
            headers["Authorization"] = f"Bearer {key}"
        transport = HttpTransport(timeout=timeout, max_body=MAX_ANSWER, tls=tls)
        try:
            response = transport.post(endpoint, body, headers)
        except TransportError as exc:
            raise GenerateError(f"the model endpoint {endpoint} gave no usable answer: {exc.reason}" if exc.sent
                                else f"cannot reach the model endpoint {endpoint}: {exc.reason}") from None
        finally:
            transport.close()
        held = (key,) if key else ()  # an endpoint may say our key back ("Incorrect API key provided: ..."): masked
        if 300 <= response.status < 400 and response.header("Location") is not None:
            raise GenerateError(f"the model endpoint {endpoint} answered HTTP {response.status}, a redirect "
                                f"(to {mask_body(response.header('Location'), held)[:200]!r}); not followed, so the key "
                                "goes nowhere else: give --llm-url the address it names, if you trust it")
        if response.status != 200:
            detail = mask_body(response.body.decode("utf-8", "replace"), held)[:300].strip() or "(no body)"  # mask, then cut
            raise GenerateError(f"the model endpoint {endpoint} answered HTTP {response.status}: {detail}")
        try:  # strictly, as every byte from outside: no NaN, no key said twice, no depth without end
            reply = loads_strict(response.body, LIMITS._replace(max_bytes=MAX_ANSWER))
        except ValueError as exc:
            raise GenerateError(f"the model endpoint {endpoint} did not answer JSON we read ({exc})") from None
        try:
            content = reply["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            content = None
        if not isinstance(content, str):
            raise GenerateError(f"the model endpoint {endpoint} answered no choices[0].message.content")
        return content
    return generate
