"""Signed Agent Cards, with the standard library only: who made this card?

Here: RFC 8785 canonical JSON (`jcs`), RS256 keys read from PEM and signatures made and
checked with them (`rs256`), ES256 on P-256 (`es256`) and EdDSA on Ed25519 (`ed25519`) with
keys as JWKs, the table of those three by JWS `alg` (`algorithms`), a card's detached JWS
signatures (`card_signature`, A2A 1.0 section 8.4), and the key tool
`python3 -m peers.signing.new_key FILE` (`new_key`).
Signing is not the protocol (a card is a card, signed or not) and not either side's:
a served peer signs its card with it, the support agent checks a card against the key
its allowlist pins.

May import: `transports` (the strict JSON codec) and the standard library.
Must not import: `peers.a2a` (the protocol), the other teams' peers, or `peers.support`.
"""
