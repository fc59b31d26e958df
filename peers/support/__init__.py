"""Our side of the boundary: the support agent's own rooms, below the story in
a2a_delegation.py (which imports them, and which nothing here imports).

  calling/   the agent's calling side: data files, cards, bindings, credentials, a
             contact, following a task, how a turn ended
  cli/       the command line's run: flags, the frozen settings, the session
  learner/   the learner's tools: trace, replay, diagrams, the step-through page
  model/     the generate() step: the model chooses, code checks, the gate decides
  lessons/   the lessons beyond the essay's run, one module each, told with the story's steps
  web/       the live page, and its one operation on any agent
  output.py  the one output path every room says its lines through

Each room's docstring says what it may import; tests/test_layout.py keeps the rules:
calling imports no other room; model and learner only calling; lessons calling and
model; web calling, learner and lessons; cli any. Essay: Discovery is not trust.

May import: `peers.a2a` (the protocol both sides share), `peers.signing`,
`peers.contracts` and `transports`.
Must not import: the story, nor the modules directly in `peers/` (billing, the rogue,
the peer core, the demo network): other teams' code, reached only through a transport.
main() hands the demo network in (cli/session.py's DemoNetwork).
"""
