"""The protocol both sides share: A2A's objects (`model`), its errors (`errors`), how each
version spells them in JSON (`wire_format` declares the interface; `wire_essay`, `wire_v03`,
`wire_v10` implement it, with `wire_message` for what 0.3 and 1.0 share), reading hostile
JSON field by field (`fields`), the one input checker (`schema`), and reading a refund
from a customer's words (`refund_text`), which both sides need.
Essay: The Agent Card; Delegation over JSON-RPC. Spec: A2A 0.3 and 1.0.

May import: `transports` (JSON-RPC, which knows nothing of A2A).
Must not import: `peers` outside this package (the other teams' peers) or `peers.support`
(the support agent): a wire module is used by both and belongs to neither.
"""
