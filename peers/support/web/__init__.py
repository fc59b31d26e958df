"""The live page: `a2a_delegation.py web` serves one page on 127.0.0.1 where a run's frames
appear as they cross, step by step if asked, with the allowlist edited in place.

Here: the page's server (`server`: the door, with its token, Host and Origin checks and
its routes), what a person entered, checked and each problem named by its field (`entered`),
the runs it starts and what they stream to the page (`runs`: each run is main() run again
with a watch hooked to its printer and Console, as --trace hooks them; `runs_by_id`: the
page's runs; `keeping`: what a run keeps, bounded, a proxy session its newest part),
the allowlist the page edits (`allowlist`), the page's requests to any agent (`agent`:
each a run whose story is one operation of peers/support/web/outside.py), a conversation's
card and token, had once (`conversation`), the run's sequence diagram drawn live by --diagram's
code (`drawing`), the tools beside the runs (`tools`: check an agent through check's own
run and report (`checking`), an allowlist entry with its diff, a request as curl, two saved
runs compared (`trace_diff`), a `proxy` session started and watched as a run
(`proxying`)), and the page itself (`live.html`, `live.js`, `controls.js`, `talk.js`,
`diagram.js`, `tools.js`, `proxy.js`, `live.css`: plain HTML, JavaScript and CSS, no
framework, no build step, no inline script).
Issue 24; essay: every section, since the page shows the essay's run and every lesson.

May import: `peers.a2a`, `peers.support` (the modules beside this package: session's Watch,
the Console, config, lessons, trace, page; `check`, run as a library; `proxy`'s build(),
served in process) and `transports` (the bounded server, the printer).
Must not import: the modules directly in `peers/` (the demo network, billing, the peer
core): a run reaches them only through main(), which hands the demo network in; nor
anything outside the standard library. Nothing here is loaded unless `web` is asked for.
"""
