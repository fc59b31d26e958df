"""`proxy --to URL`: watch any two A2A programs talk, byte for byte, annotated against the spec.

The proxy listens on 127.0.0.1 and forwards every request to the agent at --to and every
answer back, unchanged but for the hop-by-hop headers (RFC 9110 7.6.1), Via (the proxy added, so that
a request coming round to it through other proxies is refused: 7.6.3), Accept-Encoding (asked as
identity, so frames are printed, not gzip) and the card's interface URLs (moved to the proxy, so a
client pointed at it stays on it; said once as a diff). It serves with our own server (transports/server.py: its limits and deadlines) and
forwards with our own network transport (transports/network.py), wrapped by the frame
printer, so each frame is shown and traced as every run's are, tagged with who sent it.
What lives here: the app that forwards (`forward`), an answer on its way back, a stream's
events and the faults that change an answer (`passing`; a swap, `reorder`), the card's rewrite (`card`), the
faults a --seed repeats (`faults`), what it changes in header fields (hop-by-hop ones, Accept-Encoding,
Via: `message_forwarding`), the single-frame rules of check's table (`annotate`),
TLS on both sides (`tls`), the push receiver fronted with --webhook (`webhook`), the way to
the agent and whether a URL leads back to the proxy (`upstream`), and the command from
settings to exit status (`run`).

May import: `transports`, `peers.a2a`, `peers.support.output`, the calling room (card
dialects), the check room (its table of requirements) and the learner room (the trace).
Must not import: the story, the other rooms of our side (cli, lessons, model, web), nor
the modules directly in `peers/` (other teams' code): it stands between two programs, as
any outside tool would.
"""
