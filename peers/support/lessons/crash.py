"""--scenario crash: billing dies after refunding and before answering; no second refund.

Seed 004 asks of every failure "whether retrying is safe and which effects may already
have landed". Here billing runs as a process of its own, keeping its tasks and ledger in
a store file (`serve --store`), started with a test double's flag that kills it right
after it commits the refund and before it answers (`--crash-at after-commit`). The
support agent's delegation fails with no answer: the request left, so the refund may
have landed, and the support agent says a retry is not safe until billing confirms.
Billing starts again on the same file; its banner shows its ledger, which kept the
refund. So the support agent does not resend: as in --scenario slow, it looks for the
task first (ListTasks by the context it sent in, the customer's ticket), and finds the
one billing made before it died, completed. Nothing to retry; one refund. Only where the
wire has no ListTasks (0.3, the essay's) does it send the very same message again, and
then it says why that is safe here: A2A allows a server to drop a message whose
messageId it has seen, but does not require it; billing's ledger, not the protocol,
makes the copy harmless. The frames go over real HTTP to that process (this lesson
implies --transport http); its ids and port change run to run. The lesson vets that
billing itself, and gives it billing's token, whatever allowlist.json says: the file
cannot name an endpoint whose port is picked as the run starts.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile

from peers.a2a.model import AgentCard
from peers.a2a.wire_format import card_url
from peers.support.calling.config import AllowEntry
from peers.support.calling.outcomes import Contact
from peers.support.lessons import Lesson
from peers.support.lessons.turns import ask, send_turn
from peers.support.output import Kind
from peers.support.calling.replies import read
from transports.errors import PeerError, TransportError
from transports.escaping import escape
from transports.ports import spare_port
from transports.signals import made_and_removed

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Callable, ContextManager
    from peers.support.calling.story_steps import Steps
    from peers.support.calling.outcomes import Outcome

SCRIPT = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__)))),
                      "a2a_delegation.py")
TOKEN, TICKET = "crash-lesson-token", "ticket-9100"
PAYLOAD = {"order_id": "ORD-9100", "amount": 180.0}
BANNER_SECONDS = 20.0  # a billing that prints no banner in this long is not waited for


LESSON = Lesson(
    about="billing (its own process, with a store file) dies after refunding, before answering; restarted, "
          "the support agent finds the task it made (ListTasks) instead of resending: one refund",
    teaches="seed 004: which effects may already have landed, when a peer dies", order=120,
    flags={"--wire": "1.0"}, reads={"--wire": "the wire billing's own process serves"},
    needs={"--transport": ("http", "billing is a process of its own here, so that it can die and restart, and only "
                                   "HTTP reaches another process")})


def start_billing(port: int, store: str, wire: str, *extra: str,
                  running: list[subprocess.Popen]) -> tuple[subprocess.Popen, list[str]]:
    """`serve billing-agent` as its own process, added to `running` at once (so however the
    lesson ends, Ctrl-C included, it is stopped before its store's folder is removed); its
    banner's lines, up to how to stop it."""
    process = subprocess.Popen([sys.executable, SCRIPT, "serve", "billing-agent", "--wire", wire, "--port",
                                str(port), "--token", TOKEN, "--store", store, *extra],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    running.append(process)
    return process, banner_of(process, BANNER_SECONDS)


def banner_of(process: subprocess.Popen, seconds: float) -> list[str]:
    """The lines `serve` prints as it starts, up to how to stop it; what came within
    `seconds`, if it says no more (a billing that hangs must not hang the lesson). Read
    from the pipe's descriptor as it becomes readable, so no read can block."""
    import select
    import time
    deadline, printed = time.monotonic() + seconds, b""
    while b"Ctrl-C" not in printed and len(printed) < 8192:
        left = deadline - time.monotonic()
        chunk = os.read(process.stdout.fileno(), 4096) \
            if left > 0 and select.select([process.stdout], [], [], left)[0] else b""
        if not chunk:  # it exited, or said nothing more in time
            break
        printed += chunk
    return printed.decode("utf-8", "replace").splitlines()


def show_ledger(say: Callable[..., None], banner: list[str]) -> None:
    for line in banner:
        if line.startswith(("[serve] store:", "[serve] ledger:")):
            say(f"[billing] {line.removeprefix('[serve] ')}")


def run(story: Steps, card_urls: list[str], wire: str = LESSON.flags["--wire"]) -> list[Outcome]:
    """Delegate a refund to a billing that dies after it; restart it; resend; one refund."""
    story.say(f"[transport] {story.label}. A crash: billing dies after the refund, before "
              "its answer.", Kind.BANNER)
    with store_folder() as folder:
        store, port = os.path.join(folder, "billing.db"), spare_port()  # below the ephemeral range (its docstring)
        endpoint = f"http://127.0.0.1:{port}/a2a"
        # vetted, and its token issued as a platform would, for this run's billing only
        story = story.vetting([AllowEntry("billing-agent", endpoint)], {endpoint: TOKEN})
        running: list[subprocess.Popen] = []
        try:
            process, banner = start_billing(port, store, wire, "--crash-at", "after-commit", running=running)
            story.say()
            story.say(f"[support] billing runs as process {process.pid}, keeping its tasks and ledger in "
                      "billing.db; a test double's flag kills it after it commits a refund, before it answers")
            show_ledger(story.say, banner)
            story.say(f"[support] this lesson vets billing-agent at {endpoint} itself, whatever allowlist.json "
                      "says: that file cannot name a port picked as the run starts", Kind.TRUSTED)  # kept by --quiet
            card = story.find(card_url(f"http://127.0.0.1:{port}"))
            if not isinstance(card, AgentCard):
                return [card]
            contact = story.gate(card)
            if not isinstance(contact, Contact):
                return [contact]
            outcome = story.handoff(contact, "process_refund", PAYLOAD, TICKET)
            if not isinstance(outcome.failure, TransportError):  # it answered: it never reached its death
                story.say("[support] billing answered (above), so it never reached the moment it dies, after the "
                          "refund and before the answer: this lesson cannot be shown this way", Kind.ESCALATED)
                return [outcome]
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:  # the request failed short of billing's death: it lives on
                story.say("[support] billing did not die within 10 s of the failure above, so this lesson cannot "
                          "be shown this way", Kind.ESCALATED)
                return [outcome]
            story.say(f"[support] billing exited ({process.returncode}); starting it again on the same store")
            process, banner = start_billing(port, store, wire, running=running)
            if not any(f"127.0.0.1:{port}" in line and "listening on" in line for line in banner):
                story.say(f"[support] billing did not start again on port {port} (taken meanwhile?), so this "
                          "lesson cannot be shown this way", Kind.ESCALATED)  # and no stranger there is asked
                return [outcome]
            show_ledger(story.say, banner)
            if outcome.error is None or outcome.sent is None:
                return [outcome]  # answered after all, or nothing left: nothing to find out
            return [found_or_resent(story, contact, outcome)]
        finally:  # before the folder goes: no store file is left behind, and no process
            for process in running:
                stop(process)


def found_or_resent(story: Steps, contact: Contact, outcome: Outcome) -> Outcome:
    """After the restart: the task billing made before it died, looked for first (ListTasks,
    as --scenario slow does); only where the wire has none, the very same message again."""
    spoken, sent = contact.wire, outcome.sent
    try:
        if contact.method("list"):  # look before any retry
            story.say(f"[support] retry is not safe until billing confirms: looking for the task in "
                      f"context {TICKET} first (ListTasks), not resending")
            found = read(spoken.tasks_from_list, ask(story, contact, "list", {"contextId": TICKET,
                                                                              "includeArtifacts": True}),
                         "the list")  # with its result
            task = next((task for task in found if task.context_id == TICKET), None)
            if task is not None:
                story.report(contact, task)
                story.say(f"[support] found task {escape(task.id)}, {task.state.value}: the refund landed "
                          "before billing died; nothing to resend, one refund", Kind.BANNER)
                return outcome._replace(task=task, error=None, failure=None)
            story.say("[support] no task in that context: only the very same message may go again")
        same = "the same refund (the essay's wire has no messageId: billing knows it by its order)" \
            if not spoken.MESSAGE_IDS else f"the very same message ({sent.message_id})"
        story.say(f"[support] sending {same} again. A2A allows a server to drop a message whose messageId "
                  "it has seen, but does not require it: billing's ledger, not the protocol, makes this safe")
        send_turn(story, contact, sent)
    except PeerError as failure:
        return story.failed(contact.name, outcome.verdict, f"looking for the task failed: {failure}", failure)
    story.say("[support] one refund: billing's ledger above is the one that answered", Kind.BANNER)
    return outcome._replace(error=None, failure=None)


def store_folder() -> ContextManager[str]:
    """A temporary folder for billing's store, made and removed however the lesson ends: a Ctrl-C
    or SIGTERM meanwhile waits until that is done (transports/signals.py), as either, cut short,
    would leave a file or the folder behind; SIGTERM unwinds the lesson as Ctrl-C does."""
    return made_and_removed(lambda: tempfile.mkdtemp(prefix="a2a-crash-lesson-"),
                            lambda folder: shutil.rmtree(folder, ignore_errors=True))


def stop(process: subprocess.Popen) -> None:
    """Stop a billing this lesson started, and wait until it is gone (10 s, then it is killed). In
    the main thread a second Ctrl-C meanwhile is noted (store_folder) and acts once the folder is
    gone; elsewhere (the page's runs), one that cuts the wait short kills it first, then goes on."""
    process.terminate()
    try:
        process.communicate(timeout=10)
    except subprocess.TimeoutExpired:  # it would not stop: it is killed
        process.kill()
        process.wait(timeout=10)
    except KeyboardInterrupt:
        process.kill()
        process.wait(timeout=10)
        raise
