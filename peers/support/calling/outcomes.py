"""The outcome variants of a delegation, and what the support agent does with each.

Seed 000's Handoff Contract: "a typed result with explicit success and failure
variants", never prose a caller has to interpret. A delegation ends in exactly one
`Variant`; `variant_of` is the one place that decides which, from the task a peer
answered (its state, and the data its status carries) or from why no task came back;
each variant names what the support agent does next (`handling`), and which class it
belongs to: terminal (the task is over), interrupted (the same task waits for us),
active (the peer may still be working) or no task (nothing was delegated).
Most variants are A2A's TaskStates (section 4.1.3), spelled as the spec does; ours are
"approval required", "referred" and "needs evidence" (an input-required or rejected task
whose status data says so: seed 004's variants), "timed out" (the protocol cannot know
it) and "not delegated" (refused before sending, or no answer that makes a task).
A peer's whole turn ends as an `Outcome`: the trust gate's `Verdict` on it, and the task
or why there is none. A peer the gate lets through is a `Contact` (essay: Discovery is not
trust, then Delegation over JSON-RPC): its card, the verdict, the wire its card speaks and
the binding that carries it, all a send needs to know of the peer, so the one function
that sends a message and follows its task (the story's `delegate`) takes a contact,
whoever calls it. So the gate answers with a value of this module either way.
"""
import json
from enum import Enum

from peers.a2a.model import AgentCard, Message, Task, TaskState
from peers.a2a.wire_format import WireFormat, method_for
from peers.support.calling.cards import Binding
from transports.errors import PeerError, TransportError
from transports.records import Record


class Verdict(Enum):
    """The trust gate's three answers (the story's step 3)."""

    TRUSTED = "trusted"  # on the allowlist, at the endpoint it was vetted at
    UNTRUSTED = "untrusted"  # not vetted, but the user opted in: its output is data only
    REFUSED = "refused"  # not vetted: no frame is sent


class Contact(Record):
    """A peer we may send to: found, and let through by the trust gate."""

    card: AgentCard  # its url: the interface every frame goes to
    verdict: Verdict  # TRUSTED, or UNTRUSTED (opted in to): a refused peer has no contact
    wire: WireFormat  # how its objects are spelled: the card's version, or --wire where it offers that
    binding: Binding  # how a frame reaches it: JSON-RPC, or HTTP+JSON's verbs and paths

    @property
    def name(self) -> str:
        return self.card.name

    @property
    def url(self) -> str:
        """Where its frames go: the interface its card names for the binding we speak."""
        return self.card.url

    def method(self, operation: str) -> str | None:
        """The wire's name for `operation` ("get", "cancel", "list", "stream" ...), or None."""
        return method_for(self.wire, operation)


class Variant(Enum):
    """(what it is, its class, what the support agent does with it)"""

    COMPLETED = ("completed", "terminal", "use the result (an unvetted peer's stays data, tagged UNTRUSTED)")
    FAILED = ("failed", "terminal", "escalating to a human, saying whether a retry is safe and "
                                    "which effects already landed")
    REJECTED = ("rejected", "terminal", "escalating to a human: the peer would not do it, and did nothing")
    REFERRED = ("referred", "terminal", "the peer did nothing and names who decides it: hand it "
                "there, within the handoff's hop limit")
    NEEDS_EVIDENCE = ("needs evidence", "terminal", "the peer did nothing and names the claim it needs "
                      "observed afresh: refresh it from its record, then hand off again (a new task)")
    CANCELED = ("canceled", "terminal", "nothing more to do: the task was withdrawn")
    INPUT_REQUIRED = ("input-required", "interrupted", "supply what it asks as the next turn of "
                                                       "the same task, or escalate to a human")
    APPROVAL_REQUIRED = ("approval required", "interrupted", "escalating to a human: a person "
                         "approves exactly the proposed effect, then the same task goes on")
    AUTH_REQUIRED = ("auth-required", "interrupted", "present the credential it names from our "
                     "own store (never in the payload), as the next turn of the same task")
    # Reported once following it is over (the deadline came), or of one answer (a GetTask): as last seen.
    WORKING = ("working", "active", "still going when last seen: the peer may finish it yet; "
               "ask for it (GetTask) later, never send it again")
    TIMED_OUT = ("timed out", "active", "the peer may still be working: look for the task "
                 "(ListTasks, GetTask) before any retry")
    NOT_DELEGATED = ("not delegated", "no task", "the error says why, and whether a retry is safe")

    def __init__(self, label: str, group: str, handling: str) -> None:
        self.label, self.group, self.handling = label, group, handling

    def handling_over(self, wire: WireFormat) -> str:
        """What is done with it over `wire`: a paused task goes on only by a next turn, which needs a taskId."""
        if self.group == "interrupted" and not wire.TURNS:
            return (f"escalating to a human: {wire.SEND_METHOD} has no taskId, so no next turn can "
                    "continue this task (--wire 1.0 or 0.3 can)")
        return self.handling


# The states that are a variant as they are; input-required and rejected are read further.
BY_STATE = {TaskState.COMPLETED: Variant.COMPLETED, TaskState.FAILED: Variant.FAILED,
            TaskState.REJECTED: Variant.REJECTED, TaskState.CANCELED: Variant.CANCELED,
            TaskState.AUTH_REQUIRED: Variant.AUTH_REQUIRED, TaskState.SUBMITTED: Variant.WORKING,
            TaskState.WORKING: Variant.WORKING, TaskState.UNKNOWN: Variant.WORKING}  # unknown: ask later


def variant_of(task: Task | None, failure: PeerError | None = None) -> Variant:
    """The one mapping: a task's state (and what its status asks for), or the failure."""
    if task is None:
        timed_out = isinstance(failure, TransportError) and failure.timed_out
        return Variant.TIMED_OUT if timed_out else Variant.NOT_DELEGATED
    if referred_to(task) is not None:
        return Variant.REFERRED
    if needed_evidence(task) is not None:
        return Variant.NEEDS_EVIDENCE
    if task.state is TaskState.INPUT_REQUIRED:
        asks_approval = isinstance(task.status_data, dict) and "approval" in task.status_data
        return Variant.APPROVAL_REQUIRED if asks_approval else Variant.INPUT_REQUIRED
    return BY_STATE[task.state]


def referred_to(task: Task) -> str | None:
    """Whom a rejected task names as the one who decides instead (its status data's
    `referTo`), if it names one we could route to: a short name, nothing else."""
    data = task.status_data if task.state is TaskState.REJECTED and isinstance(task.status_data, dict) else {}
    named = data.get("referTo")
    return named if isinstance(named, str) and 0 < len(named) <= 64 and named.isprintable() else None


def needed_evidence(task: Task) -> dict | None:
    """The claim a rejected task asks to be observed afresh (its status data's
    `needsEvidence`), if it names one as a small object; None otherwise."""
    data = task.status_data if task.state is TaskState.REJECTED and isinstance(task.status_data, dict) else {}
    named = data.get("needsEvidence")
    return named if isinstance(named, dict) and isinstance(named.get("claim"), str) \
        and isinstance(named.get("subject"), str) else None


def as_data(task: Task) -> str:
    """What a failed task's status says as data (seed 004: "whether retrying is safe and
    which effects may already have landed"), said plainly; "" when it says nothing."""
    data = task.status_data if isinstance(task.status_data, dict) else {}
    safe, landed = data.get("retrySafe"), data.get("effectsLanded")
    if task.state is not TaskState.FAILED or not isinstance(safe, bool) or not isinstance(landed, list):
        return ""
    effects = ", ".join(str(effect)[:80] for effect in landed[:5]) or "none"
    return f" [as data: retry {'is' if safe else 'is NOT'} safe; effects landed: {effects}]"


def in_its_words(task: Task, variant: Variant, peer: str, verdict: Verdict) -> str:
    """What a task's status says beside its variant (what it asks, why it failed), said as the
    peer's words: its name and they each quoted as a JSON string (no quote either holds can end
    its quote, so neither can read as ours) and, from a peer not vetted, tagged UNTRUSTED."""
    said = task.status_message or ""  # its own words, without repeating the variant's name
    said = said[len(variant.label) + 1:].lstrip() if said.lower().startswith(variant.label + ":") else said
    said = " ".join(said.split())  # one space for each run: padding cannot wrap a line of its own into view
    tag = "" if verdict is Verdict.TRUSTED else "UNTRUSTED "
    return f": {tag}{json.dumps(peer, ensure_ascii=False)} says {json.dumps(said, ensure_ascii=False)}" if said else ""


def legend(wire: WireFormat) -> list[str]:
    """Every variant, by class, handled as over `wire`: the lines the outcomes lesson ends with."""
    lines = []
    for group in ("terminal", "interrupted", "active", "no task"):
        lines.append(f"  {group}:")
        lines += [f"    {v.label:<18} -> {v.handling_over(wire)}" for v in Variant if v.group == group]
    return lines


class Outcome(Record):
    """How one peer's turn ended: one of the Handoff Contract's explicit variants, never
    prose: which one, and what is done with it, is `variant` above."""

    peer: str
    verdict: Verdict | None  # None when discovery itself failed
    task: Task | None = None
    error: str | None = None  # why it failed, naming the stage, and whether a retry is safe
    failure: PeerError | None = None  # what was raised, when a stage failed with an exception
    sent: Message | None = None  # the message delegated, exactly as it left (a retry resends it as is)

    @property
    def variant(self) -> Variant:
        return variant_of(self.task, self.failure)

    @property
    def result(self) -> str | None:
        done = self.variant is Variant.COMPLETED
        return "".join(a.text for a in self.task.artifacts) if done else None

    @property
    def trusted(self) -> bool:
        return self.verdict is Verdict.TRUSTED

    @property
    def refused(self) -> bool:
        return self.verdict is Verdict.REFUSED
