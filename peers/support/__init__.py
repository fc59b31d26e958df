"""Our side of the boundary: the support agent's own modules, around the story in
a2a_delegation.py. What it knows of a card that the card does not say (`cards`: where it
was fetched, its signature, our decision to send), its data files (`config`), the
credentials each card's security scheme takes (`credentials`, with OAuth2 tokens fetched
by `oauth_tokens`), its own
copy of the contracts it relies on (`contracts`), the bindings it speaks (JSON-RPC in
`cards`, HTTP+JSON in `http_json`), reading what a peer sent (`replies`),
following a delegated task whatever brings its updates (`follow`, with our webhook in
`webhook`), how a delegation ended (`outcomes`), the one output path (`output`, with a
lesson's cards in brief: `frame_summaries`), one run
of the command line from flags to exit status (`session`, with `flags`, `flag_values`,
`command_line`, which parses them once into the run's frozen `settings`, and
`scenarios`), the lessons (`lessons/`, one module each), the model step and its
hooks (`planner`, `prompts`, `generate`), what the customer is told (`customer`: never
an UNTRUSTED result), and the learner tools (`tools`, `trace`,
`diagram`, `page`). Essay: Discovery is not trust (the allowlist); the generate() hook.

May import: `peers.a2a` (the protocol both sides share), `peers.signing`,
`peers.contracts` and `transports`.
Must not import: the modules directly in `peers/` (billing, the rogue, the peer core,
the demo network): other teams' code, reached only through a transport. main() hands
the demo network in (session.DemoNetwork).
"""
