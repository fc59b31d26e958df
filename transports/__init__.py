"""Transports: JSON-RPC 2.0 envelopes, and the small interface that moves one frame.

Nothing in this package knows A2A. `jsonrpc` turns bytes into requests and responses
(sans-IO); `base` names the one-frame transport interface; `inprocess` and the printer
implement it. Essay: Delegation over JSON-RPC ("reusing Part 12's transport").
"""
