"""A peer the trust gate let through, as a value.

Essay: Discovery is not trust, then Delegation over JSON-RPC. Finding a peer gives its
card; passing the gate gives a `Contact`: the card, the gate's verdict, the wire its
card speaks and the binding that carries it. It is all a send needs to know of the peer,
so the one function that sends a message and follows its task (the story's `delegate`)
takes a contact, whoever calls it (the story's steps, story_steps.py, for a lesson). Not
here: the steps themselves (the story, a2a_delegation.py).
"""
from typing import TYPE_CHECKING, NamedTuple

from peers.a2a.model import AgentCard
from peers.a2a.wire_format import WireFormat, method_for
from peers.support.calling.outcomes import Verdict

if TYPE_CHECKING:
    from peers.support.calling.cards import Binding


class Contact(NamedTuple):
    """A peer we may send to: found, and let through by the trust gate."""

    card: AgentCard  # its url: the interface every frame goes to
    verdict: Verdict  # TRUSTED, or UNTRUSTED (opted in to): a refused peer has no contact
    wire: WireFormat  # how its objects are spelled: the card's version, or --wire where it offers that
    binding: "Binding"  # how a frame reaches it: JSON-RPC, or HTTP+JSON's verbs and paths

    @property
    def name(self) -> str:
        return self.card.name

    def method(self, operation: str) -> str | None:
        """The wire's name for `operation` ("get", "cancel", "list", "stream" ...), or None."""
        return method_for(self.wire, operation)
