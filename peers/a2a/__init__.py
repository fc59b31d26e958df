"""The protocol both sides share, and only the protocol: A2A's objects (`model`), its
errors (`errors`), how each version spells them in JSON (`wire_format` declares the
interface; `wire_essay`, `wire_v03`, `wire_v10` implement it, with `wire_message` for
what 0.3 and 1.0 share), a task as a stream of events (`stream`), reading hostile JSON
field by field (`fields`), and the one input checker (`schema`); the tables both sides
read: the protocol bindings (`bindings`), HTTP+JSON's routes (`routes`), the kinds of
security scheme (`security_schemes`).
Not here: signing cards (`peers.signing`), the demo's own contracts such as the handoff
envelope (`peers.contracts`), and anything one side knows of a card (where our side
fetched it, whether it trusts it: `peers.support`).
Essay: The Agent Card; Delegation over JSON-RPC. Spec: A2A 0.3 and 1.0.

May import: `transports` (JSON-RPC, which knows nothing of A2A).
Must not import: `peers` outside this package (the other teams' peers, signing, the
contracts) or `peers.support` (the support agent): a wire module is used by both and
belongs to neither.
"""
