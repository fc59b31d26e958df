"""The lessons beyond the essay's run: `python a2a_delegation.py --scenario NAME`, one
module each (peers/support/scenarios.py lists them). Each is a short story told through
the same support agent, printer and transport as the essay's run, so its frames are
printed like any others; `turns.py` holds what the multi-turn lessons share.

May import what peers/support may: `peers.a2a`, `transports` and our own modules.
Must not import billing or the rogue: they are reached only through a transport.
"""
