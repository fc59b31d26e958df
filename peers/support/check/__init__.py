"""`check URL`: grading any A2A agent by requirement, with the frames that prove each verdict.

Checking is not delegating: nothing here consults the allowlist or tells the story, and
without --deep nothing is sent that could cause an effect (the card, version negotiation,
refusals and errors on ids no task has). What lives here: the one table of requirements
(`requirements`: id, spec section, level, title, one-line fix; the official kit's ids
where it has one, ours in the same style, prefixed WB-), the probe that sends each request
through our own calling side and records its frames (`probe`), one module per family of
checks (`card_checks`, `protocol_checks`, `auth_checks`; with --deep `task_checks`,
`stream_checks` and `caller_checks`, asked through `deep_asking` in `deep_run`'s order),
each returning verdicts keyed by the table's ids, the report in every format (`report`,
`report_html`), and the run from settings to exit status (`run`).

May import: the calling room (`peers.support.calling`: card dialects, bindings, the
credential store), `peers.a2a`, `peers.signing`, `transports` and `peers.support.output`.
Must not import: the story, the other rooms of our side (cli, learner, lessons, model, web),
nor the modules directly in `peers/` (other teams' code): it grades agents from outside, as
any caller would.
"""
