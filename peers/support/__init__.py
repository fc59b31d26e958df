"""Our side of the boundary: the support agent's own modules, around the story in
a2a_delegation.py. Its config files (`config`), its own copy of the contracts it relies
on (`contracts`), reading what a peer sent (`replies`), the command line (`flags`), the
one output path (`output`), the model
step and its hooks (`planner`, `prompts`, `generate`), and the learner tools (`tools`,
`trace`, `diagram`). Essay: Discovery is not trust (the allowlist); the generate() hook.

May import: `peers.a2a` (the protocol both sides share) and `transports`.
Must not import: `peers` outside `peers.a2a` and this package: billing and the rogue are
other teams' code, reached only through a transport.
"""
