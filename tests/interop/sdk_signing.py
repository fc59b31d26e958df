"""Run with a Python that has a2a-sdk and PyJWT: the official SDK's card signing helpers.

    sdk_signing.py verify CARD.json JWK.json   -> prints "verified", or exits 1 with why
    sdk_signing.py sign KEY.pem CARD.json      -> prints the card, signed by the SDK
The cards go through the SDK's own AgentCard type, as an SDK user's would.
"""
import json
import sys

from google.protobuf.json_format import MessageToDict, ParseDict
from jwt.api_jwk import PyJWK

from a2a.types import AgentCard
from a2a.utils.signing import create_agent_card_signer, create_signature_verifier


def main(mode, first, second):
    if mode == "verify":
        card = ParseDict(json.load(open(first)), AgentCard())
        key = PyJWK(json.load(open(second)), algorithm="RS256")
        create_signature_verifier(lambda kid, jku: key, ["RS256"])(card)
        print("verified")
    else:
        card = ParseDict(json.load(open(second)), AgentCard())
        kid = json.load(open(first + ".kid"))["kid"]
        signer = create_agent_card_signer(open(first).read(), {"alg": "RS256", "kid": kid, "typ": "JOSE", "jku": None})
        print(json.dumps(MessageToDict(signer(card))))


if __name__ == "__main__":
    main(*sys.argv[1:4])
