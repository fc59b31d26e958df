#!/usr/bin/env python3
"""Card signatures in pure Python, timed: signing and checking billing's card with each kind of key.

For each algorithm (RS256, ES256, EdDSA) with billing's DEMO key of that kind: the median
and slowest of --runs checks of billing's signed card as the trust gate makes them
(card_signature.unproven: the header read, the signature checked), the same for a card
altered after signing (the check a forger pays for), and the median time to sign the card.
No target: a card is checked once per fetch, so a few milliseconds are nothing beside the
fetch. Run: python bench/signatures.py [--runs 50]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

from peers import billing  # noqa: E402
from peers.a2a import wire_v10  # noqa: E402
from peers.demo_auth import demo_key  # noqa: E402
from peers.signing import card_signature  # noqa: E402


def timed(action, runs: int) -> list[float]:
    seconds = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        seconds.append(time.perf_counter() - started)
    return seconds


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    runs = parser.parse_args(argv).runs
    card = wire_v10.card_to_wire(billing.billing_agent().card)
    print(f"{'alg':6} {'verify median':>14} {'verify max':>11} {'forged median':>14} {'sign median':>12}")
    for algorithm, key in zip(("RS256", "ES256", "EdDSA"), demo_key("billing-agent", ["RS256", "ES256", "EdDSA"])):
        document = card_signature.sign(card, key)
        signed = card_signature.signed_content(document)
        forged = card_signature.signed_content(json.loads(json.dumps({**document, "description": "altered"})))
        assert card_signature.unproven(signed, key.public) is None and card_signature.unproven(forged, key.public)
        verify = timed(lambda: card_signature.unproven(signed, key.public), runs)
        refuse = timed(lambda: card_signature.unproven(forged, key.public), runs)
        sign = timed(lambda: card_signature.sign(card, key), max(1, runs // 5))
        print(f"{algorithm:6} {statistics.median(verify) * 1000:11.2f} ms {max(verify) * 1000:8.2f} ms "
              f"{statistics.median(refuse) * 1000:11.2f} ms {statistics.median(sign) * 1000:9.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
