"""The other teams' peers: agents the support agent does not own and reaches only by frames.

Here: the peer core that turns a request into a task (`peer`), where it keeps its tasks
(`store`), how each wire's JSON-RPC methods map onto it (`methods`), the app that serves
its card and answers frames (`app`, through a binding: `jsonrpc_binding`, `rest`), the
essay's two peers (`billing`, `rogue`), and the
demo network that runs them in this process or on 127.0.0.1 (`demo`, with its keys, TLS
certificates and billing under each security scheme in `demo_auth`). A peer is built by
composition: its store publishes each change once on a feed (`changes`) that its streams
(`streaming`) and webhooks (`push`) read; `durable` keeps store and ledger in SQLite,
`serving` runs one peer for `serve NAME`, and `doubles` holds the test doubles that wrap
its real parts.
Essay: The Agent Card; Discovery is not trust.

May import: `peers.a2a` (the protocol both sides share) and `transports`.
Must not import: `peers.support` (the support agent's side of the boundary).
"""
