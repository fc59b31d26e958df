"""Everything that speaks A2A: the objects (`model`), a wire format (`wire_essay`), the
peer core that runs skills (`peer`), the HTTP-shaped app that serves it (`app`), and the
two peers of the essay (`billing`, `rogue`). Essay: The Agent Card; Discovery is not trust.
"""
