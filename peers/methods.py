"""How a peer answers each A2A operation: every wire's method names, mapped onto the peer core.

A served peer answers the essay's, 0.3's and 1.0's methods on one endpoint, choosing by method name (the names
never collide across versions). Each wire module says which operation each of its names asks for (`METHODS`);
this module maps those operations onto `Peer`, and is where what a wire could not read becomes -32602. An
operation the peer's card does not declare (streaming, push notifications, an extended card) is refused with
the spec's own error, not "Method not found" (A2A 1.0 section 3.3.4). `OPERATIONS` is the one table from
operation to handler: JSON-RPC reaches it by method name (`MethodTable`), HTTP+JSON by route (peers/rest.py),
so an operation is added once, for both bindings, and each is checked once: its version, the extensions it
needs, the tenant it names. Spec: A2A 1.0 sections 5.3 and 9.4 (methods), 11.3 (routes), 3.6 (versions).
"""

from __future__ import annotations

from peers.a2a import wire_format as wire_formats
from peers.a2a.errors import (ExtendedAgentCardNotConfigured, ExtensionSupportRequired, PushNotificationNotSupported,
                              InvalidField, UnsupportedOperation, VersionNotSupported)
from peers.a2a.fields import WireError
from peers.a2a.model import Task
from peers.a2a.wire_format import TaskQueries, WireFormat
from peers.peer import Peer
from peers.tenants import partition, split
from transports.jsonrpc import Handler, InvalidParams, InvalidRequest, JsonRpcError, Stream
from transports.records import Record

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Callable

NO_STREAMING = "this agent does not stream (capabilities.streaming is false)"
NO_PUSH = "this agent does not send push notifications (capabilities.pushNotifications is false)"


class Caller(Record):
    """What a method may know of who is calling: the context dispatch() passes."""

    owner: str  # whose tasks it may see: its credential ("" where none are checked), within its tenant
    version: str | None  # the A2A-Version asked for, as "Major.Minor" (peers/a2a/versions.py); None: none
    scopes: frozenset[str] = frozenset()  # what its credential grants beyond asking (a step-up)
    extensions: tuple[str, ...] = ()  # the card's extensions it activated (A2A-Extensions)
    version_refused: str = ""  # why the A2A-Version it asked for cannot be served, if it cannot


def _send(wire_format: WireFormat, peer: Peer) -> Handler:
    def send(params: Any, caller: Caller) -> Any:
        asked = read(wire_format.send_request, params)  # all of it judged before any effect
        message = _answerable(peer, asked.message, asked.accepted_modes)
        free_place, started = _webhook_with(wire_format, peer, asked.push_config, caller, message)
        try:
            task = peer.send_message(message, owner=caller.owner, scopes=caller.scopes,
                                     wait=not asked.return_immediately, started=started)
        finally:
            free_place()  # the webhook's place, unless a task of this send kept it
        return wire_format.send_result(task, asked.history_length)
    return send


def _answerable(peer: Peer, message: Any, accepted: tuple[str, ...]) -> Any:
    """The message, if it is the user's and its skill answers in an acceptedOutputMode the caller sent, if any."""
    if message.role != "user":
        raise InvalidParams("message.role must be the user's")
    if accepted:
        from peers.modes import refuse_unless_answerable
        refuse_unless_answerable(peer, message, accepted)
    return message


def _webhook_with(wire_format: Any, peer: Peer, push: Any, caller: Caller, message: Any) -> tuple[Callable, Any]:
    """A webhook sent with the message (configuration.taskPushNotificationConfig), judged now, its
    place held; then what frees the place (a turn refused registers nothing) and what registers it
    on the task answered: a new one before its work begins, a turn taken, or an earlier task."""
    if push is None:
        return lambda: None, None  # no webhook: no place to free
    if not peer.card.push_notifications:
        raise PushNotificationNotSupported(NO_PUSH)
    webhooks, again = peer.webhooks, (caller.owner, message.message_id) in peer.store.by_message  # a resend?
    place = webhooks.admit(caller.owner, push._replace(task_id=message.task_id or ""), again)

    def started(task: Task, must_keep: bool = False) -> None:  # only this webhook is told: the task as it is
        kept = webhooks.set(caller.owner, push._replace(task_id=task.id), wire_format,  # no id: push_limits names it
                            place=place, must_keep=must_keep, named=bool(push.id))
        peer.store.flush()  # kept before it is told (a change made meanwhile is told by the feed)
        now = peer.store.find(task.id, caller.owner)
        if now is None:  # forgotten meanwhile (a full store): its webhooks went with it, and so does this one
            return webhooks.delete(caller.owner, task.id, kept.id)
        webhooks.tell(now, caller.owner, only=kept)
    return lambda: webhooks.free(place), started


def _push(verb: str) -> Callable[[Any, Peer], Handler]:
    """The push-config methods (set, get, list, delete) on the caller's own tasks; no push: -32003."""
    def make(wire_format: Any, peer: Peer) -> Handler:
        if not peer.card.push_notifications:
            return _refusal(PushNotificationNotSupported, NO_PUSH)(wire_format, peer)

        def handle(params: Any, caller: Caller) -> Any:
            webhooks, tenant = peer.webhooks, split(caller.owner)[0]  # a config's answer names its tenant
            if verb == "set":
                config = read(wire_format.push_config, params)
                peer.get_task(config.task_id, owner=caller.owner)  # one's own task, or -32001
                kept = webhooks.set(caller.owner, config, wire_format, named=bool(config.id))  # none: named here
                if peer.store.find(config.task_id, caller.owner) is None:  # forgotten since found: its webhooks went
                    webhooks.delete(caller.owner, config.task_id, kept.id)  # with it, and so does this one (kept, it
                    peer.get_task(config.task_id, owner=caller.owner)  # was never told, nor deleted): -32001
                return wire_format.push_to_wire(kept, tenant)
            if verb == "list":  # a page of them (1.0): a token naming none of them is the caller's -32602
                task_id, size, token = read(wire_format.push_list_query, params)
                peer.get_task(task_id, owner=caller.owner)
                return read(lambda kept: wire_format.push_list_result(kept, tenant, size, token),
                            webhooks.list(caller.owner, task_id))
            task_id, config_id = read(wire_format.push_query, params)
            peer.get_task(task_id, owner=caller.owner)
            if verb == "get":
                return wire_format.push_to_wire(webhooks.get(caller.owner, task_id, config_id or task_id), tenant)
            return webhooks.delete(caller.owner, task_id, config_id or task_id)  # None: a delete's answer is null
        return handle
    return make


def _stream(wire_format: WireFormat, peer: Peer) -> Handler:
    """SendStreamingMessage: the turn's events, one result each (an SSE stream); no streaming: the spec's refusal."""
    if not peer.card.streaming:
        return _refusal(UnsupportedOperation, NO_STREAMING)(wire_format, peer)

    def stream(params: Any, caller: Caller) -> Any:
        asked = read(wire_format.send_request, params)
        message = _answerable(peer, asked.message, asked.accepted_modes)  # before any effect
        free_place, started = _webhook_with(wire_format, peer, asked.push_config, caller, message)  # as send's: told too
        try:  # the stream's send is taken, or refused, before it returns
            events = peer.streams.send(peer, message, owner=caller.owner, scopes=caller.scopes, started=started)
        finally:
            free_place()  # the webhook's place, unless a task of this send kept it
        history = asked.history_length  # a Task event's, as a send's answer
        return Stream(None if event is None else wire_format.stream_result(event, history) for event in events)
    return stream


def _subscribe(wire_format: Any, peer: Peer) -> Handler:
    """SubscribeToTask: a task from now, each change as it happens, until it ends; a finished one: -32004."""
    if not peer.card.streaming:
        return _refusal(UnsupportedOperation, NO_STREAMING)(wire_format, peer)

    def subscribe(params: Any, caller: Caller) -> Any:
        task_id, _ = read(wire_format.task_query, params)
        task = peer.get_task(task_id, owner=caller.owner)  # unknown, or another's: -32001 now
        if task.state.is_terminal:
            raise UnsupportedOperation(f"task {task.id[:80]!r} is {task.state.value}: it has no more events")
        events = peer.streams.watch(peer, task.id, owner=caller.owner)
        return Stream(None if event is None else wire_format.stream_result(event) for event in events)
    return subscribe


def _extended_card(wire_format: WireFormat, peer: Peer) -> Handler:
    """GetExtendedAgentCard (0.3: agent/getAuthenticatedExtendedCard): the fuller card a peer shows a caller
    that proved who it is. A card that does not declare one is refused as its version says; one that declares it
    with none configured, with -32007 (spec 3.1.11)."""
    if peer.extended_card is None and peer.card.extended_card:
        return _refusal(ExtendedAgentCardNotConfigured, "the card declares an extended card, but none is "
                        "configured")(wire_format, peer)
    if peer.extended_card is None:
        return _refusal(wire_format.NO_EXTENDED_CARD, "this agent declares no extended card")(wire_format, peer)

    def extended(params: Any, caller: Caller) -> Any:
        # Spec 3.1.11 and 13.3: the operation MUST require authentication. A caller without a credential
        # never gets here where the app checks one (its 401 comes first, as for a task); an app that checks
        # none tells nobody apart, so shows the card to nobody (`serve` will not start so: peers/demo.py).
        if not split(caller.owner)[1]:  # nobody, whatever tenant it names
            raise ExtendedAgentCardNotConfigured("it is for authenticated callers; this server checks no credentials")
        return wire_format.card_to_wire(peer.extended_card)
    return extended


def _get(wire_format: TaskQueries, peer: Peer) -> Handler:
    def get(params: Any, caller: Caller) -> Any:
        task_id, history_length = read(wire_format.task_query, params)
        return wire_format.task_to_wire(peer.get_task(task_id, owner=caller.owner), history_length)
    return get


def _cancel(wire_format: TaskQueries, peer: Peer) -> Handler:
    def cancel(params: Any, caller: Caller) -> Any:
        task_id, _ = read(wire_format.cancel_query, params)
        return wire_format.task_to_wire(peer.cancel_task(task_id, owner=caller.owner))
    return cancel


def _list(wire_format: TaskQueries, peer: Peer) -> Handler:
    def list_tasks(params: Any, caller: Caller) -> Any:
        query = read(wire_format.list_query, params)
        return wire_format.list_result(peer.list_tasks(query, owner=caller.owner), query)
    return list_tasks


def _refusal(error: type[JsonRpcError], why: str) -> Callable[[WireFormat, Peer], Handler]:
    def refuse(params: Any, caller: Caller) -> Any:
        raise error(why)
    return lambda wire_format, peer: refuse


OPERATIONS: dict[str, Callable[[Any, Peer], Handler]] = {
    "send": _send, "get": _get, "cancel": _cancel, "list": _list,
    "stream": _stream, "subscribe": _subscribe,
    **{f"push-{verb}": _push(verb) for verb in ("set", "get", "list", "delete")},
    "extended-card": _extended_card, "authenticated-extended-card": _extended_card,
}


class MethodTable:
    """Every wire's JSON-RPC methods for one peer: the table dispatch() looks in. The wire the peer's card
    speaks is mapped at once; the other wires the first time a caller uses a method that one lacks, so the
    essay's run never loads 0.3 and 1.0."""

    def __init__(self, peer: Peer, card_format: WireFormat, tenants: frozenset[str] = frozenset({""})) -> None:
        self.peer, self.tenants = peer, tenants  # the tenants its served card declares (peers/tenants.py)
        self.handlers = self.methods_of(card_format)
        self.complete = False  # True once every wire's methods are in `handlers`

    def get(self, method: str) -> Handler | None:
        if method not in self.handlers and not self.complete:
            for name in wire_formats.NAMES:
                self.handlers.update(self.methods_of(wire_formats.by_name(name)))
            self.complete = True
        return self.handlers.get(method)

    def methods_of(self, wire_format: WireFormat) -> dict[str, Handler]:
        return {method: self.operation(wire_format, operation) for method, operation in wire_format.METHODS.items()}

    def operation(self, wire_format: WireFormat, operation: str) -> Handler:
        """One operation ("send", "get", ...: OPERATIONS) in `wire_format`'s spelling, with its version check."""
        return _in_version(wire_format, self.peer, OPERATIONS[operation](wire_format, self.peer), self.tenants)


def _in_version(wire_format: WireFormat, peer: Peer, handler: Handler, tenants: frozenset[str]) -> Handler:
    """The version check first (1.0 methods need A2A-Version: 1.0), then the extensions the card requires
    (-32008 for one the caller did not activate; -32600 where a wire lacks it), then the tenant the request
    names (its params' `tenant`, on every wire: the caller's tasks within it are all it reaches), and every A2A
    error with the data that version attaches (1.0: an ErrorInfo)."""
    def answer(params: Any, caller: Caller) -> Any:
        try:
            if caller.version_refused:  # whatever the method: no version's semantics can be chosen
                raise VersionNotSupported(caller.version_refused)
            wire_format.check_version(caller.version)
            missing = [uri for uri in peer.card.required_extensions if uri not in caller.extensions]
            if missing:  # 0.3 and the essay's wire have no -32008: refused all the same, as an invalid request
                raise (ExtensionSupportRequired if wire_format.EXTENSION_ERRORS else InvalidRequest)(
                    f"activate {', '.join(missing)} with the A2A-Extensions header (0.3: X-A2A-Extensions)")
            owner = partition(params, caller.owner, tenants)  # the caller's own, unless it names a tenant
            return handler(params, caller if owner == caller.owner else caller._replace(owner=owner))
        except JsonRpcError as exc:
            exc.data = wire_format.error_data(exc)
            raise
    return answer


def read(reader: Callable[[Any], Any], params: Any) -> Any:
    """What a wire reads from params; a shape it cannot read is the caller's -32602."""
    try:
        return reader(params)
    except WireError as exc:
        raise InvalidField(exc) from None
