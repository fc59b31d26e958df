"""The agent's calling side: how the support agent finds, judges and calls another agent.

Essay: The Agent Card, Discovery is not trust, Delegation over JSON-RPC. Reading its data
files (`files`, the registry and allowlist in `config`, the credential store in `held`);
reading what a peer sent (`replies`) and a fetched card (`card_reading`, into the
`cards.FetchedCard` our side keeps of it); the bindings it speaks (JSON-RPC in `cards`,
HTTP+JSON in `http_json`, routes from peers/a2a/routes.py); the credential each card's
scheme takes (`credentials`, OAuth2 tokens by `oauth_tokens`) and which goes to each
endpoint (`keyring`, asked by transports/credentialed.py, the transport that attaches it);
the card dialects of other SDKs (`card_dialects`); the story's steps as values
(`story_steps`); following a delegated task whatever brings its updates (`follow`,
our webhook in `webhook`, what a broken stream missed in `caught_up`); how a turn ended
(`outcomes`: the Verdict, a Contact the gate let through, the Outcome, its variant); our
own copy of the contracts we rely on (`contracts`).

May import: `peers.a2a`, `peers.signing`, `peers.contracts`, `transports` and
`peers.support.output`.
Must not import: the story, the other rooms of our side (cli, learner, lessons, model,
web), nor the modules directly in `peers/` (other teams' code).
"""
