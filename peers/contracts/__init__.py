"""The demo's own contracts: what billing and the support agent agree on beyond A2A.

Here: the handoff envelope a delegation carries in its message's metadata (`handoff`,
seed 004: contract version, objective, permitted actions with limits and expiry, hops
and who owns the decision), what a transfer hands over (`transfer`: who advances the
task, its current status, who keeps the customer, the sender's span), its claims by
reference, classed and dated (`evidence`), and reading a refund out of a customer's
words (`refund_text`). None of it is part of
A2A: another pair of agents would agree on other contracts. Both sides use them, as
two teams would share a published schema.

May import: `peers.a2a` (the protocol) and `transports`.
Must not import: the other teams' peers (`peers.*` modules) or `peers.support`.
"""
