"""Run with a Python that has a2a-sdk and PyJWT: the official SDK's card signing helpers.

    sdk_signing.py verify CARD.json JWK.json [ALG]  -> prints "verified", or exits 1 with why
    sdk_signing.py sign KEY CARD.json [ALG]         -> prints the card, signed by the SDK
ALG is RS256 (the default), ES256 or EdDSA. KEY is a PEM file for RS256 and a private JWK
(with "d") for ES256 and EdDSA; the kid for the header is read from KEY.kid (a JWK whose
"kid" it is). The cards go through the SDK's own AgentCard type, as an SDK user's would.
"""
import json
import sys

from google.protobuf.json_format import MessageToDict, ParseDict
from jwt.api_jwk import PyJWK

from a2a.types import AgentCard
from a2a.utils.signing import create_agent_card_signer, create_signature_verifier


def main(mode, first, second, algorithm="RS256"):
    if mode == "verify":
        card = ParseDict(json.load(open(first)), AgentCard())
        key = PyJWK(json.load(open(second)), algorithm=algorithm)
        create_signature_verifier(lambda kid, jku: key, [algorithm])(card)
        print("verified")
    else:
        card = ParseDict(json.load(open(second)), AgentCard())
        kid = json.load(open(first + ".kid"))["kid"]
        key = open(first).read() if algorithm == "RS256" else PyJWK(json.load(open(first)), algorithm=algorithm)
        signer = create_agent_card_signer(key, {"alg": algorithm, "kid": kid, "typ": "JOSE", "jku": None})
        print(json.dumps(MessageToDict(signer(card))))


if __name__ == "__main__":
    main(*sys.argv[1:5])
