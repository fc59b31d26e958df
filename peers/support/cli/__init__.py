"""The command line's run: from the flags to the exit status.

The flags (`flags`, their values' checks in `flag_values`), parsed once into a frozen
record (`command_line` makes `settings.Settings`), the lesson or model a run asks for
(`scenarios`), and one run set up and told (`session`: the data files read, the demo
network built, the printer's listeners attached, the learner tools around the story,
the exit status). main() in a2a_delegation.py is the one caller.

May import: every other room of our side (calling, check, learner, lessons, model, web),
`peers.a2a` and `transports`.
Must not import: the story, nor the modules directly in `peers/` (main() hands the demo
network in).
"""
