"""ES256 and EdDSA card signatures beside RS256: the RFCs' known answers, keys pinned as JWKs
of each kind, the pin's kind deciding the algorithm (no confusion, no `none`, no key chosen
by `kid` or `jku`), and hostile signatures and keys refused, each a seeded, bounded case.
Real cards through the real apps and the trust gate; the keys are the RFCs' and the DEMO ones."""
import hashlib
import hmac
import json
import random
from pathlib import Path

import pytest

from conftest import BILLING, BILLING_CARD, support_agent
from peers import billing
from peers.a2a import wire_v10
from peers.app import PeerApp
from peers.demo_auth import demo_key
from peers.signing import algorithms, card_signature, ed25519, es256, rs256
from peers.signing.rs256 import b64url, from_b64url
from peers.support.calling.config import AllowEntry, ConfigError, load_allowlist

ROOT = Path(__file__).parent.parent
RSA, EC, ED = demo_key("billing-agent", ["RS256", "ES256", "EdDSA"])  # billing's DEMO keys, one of each kind
# RFC 6979 A.2.5's key (P-256), and RFC 7515 A.3's: an EC key that is not billing's
RFC6979 = es256.PrivateKey(0xC9AFA9D845BA75166B5C215767B1D6934E50C3DB36E89B127B8A622B120F6721, es256.PublicKey(
    0x60FED4BA255A9D31C961EB74C6356D68C049B8923B61FA6CE669622E60F29FB6,
    0x7903FE1008B8BC99A41AE9E95628BC64F2F1B20C2D7E9F5177A3C294D4462299))
RFC7515 = es256.private_from_jwk({"kty": "EC", "crv": "P-256", "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
                                  "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0",
                                  "d": "jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI"})
RFC8032_1 = ed25519.private_from_seed(bytes.fromhex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"))


# -- known answers: the RFCs' own vectors ----------------------------------------------------

@pytest.mark.parametrize("message, r_value, s_value", [  # RFC 6979 A.2.5, P-256 with SHA-256
    (b"sample", "EFD48B2AACB6A8FD1140DD9CD45E81D69D2C877B56AAF991C34D0EA84EAF3716",
     "F7CB1C942D657C41D436C7A1B6E29F65F3E900DBB9AFF4064DC4AB2F843ACDA8"),
    (b"test", "F1ABB023518351CD71D881567B1EA663ED3EFCF6C5132B354F28D3B0B7D38367",
     "019F4113742A2B14BD25926B49C649155F267E60D3814B4C0CC84250E46F0083"),
])
def test_es256_signs_the_rfc_6979_vectors_byte_for_byte_and_verifies_them(message, r_value, s_value):
    assert es256.private_from_jwk({**RFC6979.public.jwk(), "d": b64url(RFC6979.d.to_bytes(32, "big"))}) == RFC6979
    signature = es256.sign(RFC6979, message)
    assert signature.hex().upper() == r_value + s_value
    assert es256.verify(RFC6979.public, message, signature)
    assert not es256.verify(RFC6979.public, message + b".", signature)


def test_es256_verifies_the_rfc_7515_a3_jws():
    signing_input = (b"eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNv"
                     b"bS9pc19yb290Ijp0cnVlfQ")
    signature = from_b64url("DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q")
    assert es256.verify(RFC7515.public, signing_input, signature)
    assert not es256.verify(RFC6979.public, signing_input, signature)


@pytest.mark.parametrize("seed, public, message, signature", [  # RFC 8032 section 7.1, TEST 1 and TEST 2
    ("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
     "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
     "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24"
     "655141438e7a100b"),
    ("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
     "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
     "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aee"
     "b00d291612bb0c00"),
])
def test_ed25519_makes_the_rfc_8032_keys_and_signatures_byte_for_byte(seed, public, message, signature):
    key = ed25519.private_from_seed(bytes.fromhex(seed))
    assert key.public.encoded.hex() == public
    assert ed25519.sign(key, bytes.fromhex(message)).hex() == signature
    assert ed25519.verify(key.public, bytes.fromhex(message), bytes.fromhex(signature))
    assert not ed25519.verify(key.public, bytes.fromhex(message) + b"\x00", bytes.fromhex(signature))


def test_ed25519_reads_the_rfc_8037_jwk_and_makes_its_jws_and_thumbprint():
    jwk = {"kty": "OKP", "crv": "Ed25519", "d": "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A",
           "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}
    key = algorithms.private_from_jwk(jwk)
    assert key == RFC8032_1 and key.public.jwk()["kid"] == "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"  # A.3
    signing_input = b"eyJhbGciOiJFZERTQSJ9.RXhhbXBsZSBvZiBFZDI1NTE5IHNpZ25pbmc"  # A.4
    assert b64url(ed25519.sign(key, signing_input)) == ("hgyY0il_MGCjP0JzlnLWG1PPOt7-09PGcvMg3AIbQR6dWbhijcNR4ki4iylG"
                                                         "jg5BhVsPt9g7sVvpAr_MuM0KAg")


# -- hostile ES256 signatures and keys ---------------------------------------------------------

def test_an_es256_signature_of_the_wrong_length_or_with_r_or_s_out_of_range_is_refused():
    signature = es256.sign(RFC6979, b"card")
    r_value, s_value = int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big")
    order = es256.ORDER

    def spelled(first, second):
        return first.to_bytes(32, "big") + second.to_bytes(32, "big")
    der = bytes([0x30, 68, 2, 32]) + signature[:32] + bytes([2, 32]) + signature[32:]  # DER, not JWS's r || s
    for bad in (b"", signature[:63], signature + b"\x00", b"\x00" + signature, der, signature * 1000,
                spelled(0, s_value), spelled(r_value, 0), spelled(0, 0), spelled(order, s_value),
                spelled(r_value, order), spelled(2**256 - 1, s_value), spelled(r_value, 2**256 - 1)):
        assert not es256.verify(RFC6979.public, b"card", bad)
    if r_value + order < 2**256:  # r + n names the same x mod n: a lax check would take it
        assert not es256.verify(RFC6979.public, b"card", spelled(r_value + order, s_value))
    # (r, n - s) is ECDSA's other valid signature of the same bytes: no forgery, and accepted
    # as OpenSSL and PyJWT accept it (JWS asks for no low-s form)
    assert es256.verify(RFC6979.public, b"card", spelled(r_value, order - s_value))


def test_a_pinned_ec_key_must_be_a_point_on_p256_in_full_length_coordinates():
    jwk = RFC6979.public.jwk()
    off_curve = b64url(((RFC6979.public.y + 1) % es256.PRIME).to_bytes(32, "big"))
    beyond = b64url((RFC6979.public.x + es256.PRIME).to_bytes(32, "big")) if RFC6979.public.x + es256.PRIME < 2**256 \
        else b64url((2**256 - 1).to_bytes(32, "big"))
    for bad, why in (({**jwk, "y": off_curve}, "not a point on the curve"),
                     ({**jwk, "x": beyond}, "not a point on the curve"),
                     ({**jwk, "x": b64url(b"\x00" * 32), "y": b64url(b"\x00" * 32)}, "not a point on the curve"),
                     ({**jwk, "x": jwk["x"][:-2]}, '"x" must be 32 bytes'),
                     ({**jwk, "y": "A" * 200_000}, '"y" must be'),
                     ({**jwk, "x": 5}, '"x" must be'), ({**jwk, "crv": "P-384"}, '"crv": "P-256"'),
                     ({**jwk, "crv": "secp256k1"}, '"crv": "P-256"')):
        with pytest.raises(rs256.BadKey, match=why):
            algorithms.public_from_jwk(bad)
    assert algorithms.public_from_jwk(jwk) == RFC6979.public


@pytest.mark.parametrize("algorithm, seed", [("ES256", 13), ("EdDSA", 8032)])
def test_seeded_random_signatures_and_bit_flips_never_verify(algorithm, seed):
    module, key = {"ES256": (es256, EC), "EdDSA": (ed25519, ED)}[algorithm]
    rng = random.Random(seed)
    signature = module.sign(key, b"card")
    for _ in range(25):
        assert not module.verify(key.public, b"card", rng.randbytes(64))
        flipped = bytearray(signature)
        flipped[rng.randrange(64)] ^= 1 << rng.randrange(8)
        assert not module.verify(key.public, b"card", bytes(flipped))


# -- hostile EdDSA signatures and keys ---------------------------------------------------------

def small_order_points():
    """The 8 points of order dividing 8, as their encodings: [L]P is one of order 8 for a
    point P whose order is 8L (the first y that gives one); its multiples are all of them
    (computed, not copied)."""
    def identity(point):
        return point[0] % ed25519.PRIME == 0 and (point[1] - point[2]) % ed25519.PRIME == 0
    candidates = (ed25519._decode(y_value.to_bytes(32, "little")) for y_value in range(2, 100))
    torsion = next(torsion for point in candidates if point is not None
                   and not identity(ed25519._times(4, torsion := ed25519._times(ed25519.ORDER, point))))
    points, point = [], ed25519.IDENTITY
    for _ in range(8):
        points.append(ed25519._encode(point))
        point = ed25519._add(point, torsion)
    return points


def test_the_small_order_points_are_the_eight_libsodium_blocks():
    blocked = ["01" + "00" * 31, "ec" + "ff" * 30 + "7f",
               "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
               "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"]
    assert set(small_order_points()) >= {bytes.fromhex(point) for point in blocked}
    assert len(set(small_order_points())) == 8


@pytest.mark.parametrize("point", small_order_points(), ids=lambda point: point.hex()[:8])
def test_a_small_order_ed25519_key_is_never_pinned_and_never_verifies(point):
    jwk = {"kty": "OKP", "crv": "Ed25519", "x": b64url(point)}
    with pytest.raises(rs256.BadKey, match="small order"):
        algorithms.public_from_jwk(jwk)
    # The identity as a key "verifies" R = [S]B for any message, S chosen freely, where only the equation is checked:
    s_value = 12345
    forged = ed25519._encode(ed25519._times(s_value, ed25519.BASE)) + s_value.to_bytes(32, "little")
    assert not ed25519.verify(ed25519.PublicKey(point), b"any card at all", forged)


def test_an_ed25519_signature_with_s_not_below_l_or_a_small_order_r_is_refused():
    signature = ed25519.sign(ED, b"card")
    s_value = int.from_bytes(signature[32:], "little")
    assert ed25519.verify(ED.public, b"card", signature)
    # [S + L]B = [S]B: a check that reduced S would take this second spelling of the signature
    assert not ed25519.verify(ED.public, b"card", signature[:32] + (s_value + ed25519.ORDER).to_bytes(32, "little"))
    assert not ed25519.verify(ED.public, b"card", signature[:32] + (2**256 - 1).to_bytes(32, "little"))
    for small in small_order_points():
        assert not ed25519.verify(ED.public, b"card", small + signature[32:])
    for bad in (b"", signature[:63], signature + b"\x00", signature * 1000):
        assert not ed25519.verify(ED.public, b"card", bad)


def test_a_non_canonical_ed25519_encoding_is_refused_as_key_and_as_r():
    prime = ed25519.PRIME
    spellings = [(y_value | sign << 255).to_bytes(32, "little") for y_value in range(prime, 2**255) for sign in (0, 1)]
    spellings.append(bytes.fromhex("01" + "00" * 30 + "80"))  # the identity with x's sign bit set: x = 0 has none
    signature = ed25519.sign(ED, b"card")
    for spelling in spellings:
        assert ed25519._decode(spelling) is None
        with pytest.raises(rs256.BadKey, match="one encoding"):
            algorithms.public_from_jwk({"kty": "OKP", "crv": "Ed25519", "x": b64url(spelling)})
        assert not ed25519.verify(ED.public, b"card", spelling + signature[32:])


# -- the pin decides: JWKs of each kind, and no algorithm confusion ---------------------------

def test_the_allowlist_pins_a_key_of_each_kind_and_refuses_a_bad_one_in_one_line(tmp_path):
    path = tmp_path / "allow.json"

    def pinning(jwk):
        path.write_text(json.dumps({"trusted": [{"name": "billing-agent", "endpoint": "https://b.example/a2a",
                                                 "publicKey": jwk}]}))
        return load_allowlist(str(path))[0].public_key
    for key in (RSA, EC, ED):
        assert pinning(key.public.jwk()) == key.public and pinning(key.public.jwk()).ALGORITHM == key.ALGORITHM
    assert pinning({**EC.public.jwk(), "alg": "ES256", "use": "sig"}) == EC.public
    for jwk, why in (({"kty": "oct", "k": "c2VjcmV0"}, '"kty" "RSA", "EC"'),  # a shared secret: HS256's door stays shut
                     ({**EC.public.jwk(), "kty": ["EC"]}, '"kty" "RSA", "EC"'), ({"kty": {"EC": 1}}, '"kty" "RSA"'),
                     ({**ED.public.jwk(), "crv": ["Ed25519"]}, '"crv": "Ed25519"'),
                     ({**EC.public.jwk(), "alg": "RS256"}, 'says "alg": \'RS256\', but an EC key signs with ES256'),
                     ({**ED.public.jwk(), "alg": "none"}, "'none', but an OKP key signs with EdDSA"),
                     ({**ED.public.jwk(), "d": b64url(ED.seed)}, 'private key \\("d"\\): pin only its public half'),
                     ({**EC.public.jwk(), "y": EC.public.jwk()["x"]}, "not a point on the curve P-256"),
                     ({"kty": "OKP", "crv": "X25519", "x": ED.public.jwk()["x"]}, '"crv": "Ed25519"')):
        with pytest.raises(ConfigError, match=r"trusted\[0\]\.publicKey: .*" + why):
            pinning(jwk)


def signed_card(*keys, alter=None):
    """billing's card as served, signed by `keys` in order, then changed by `alter`: what it
    signs and its signatures."""
    document = json.loads(PeerApp(billing.billing_agent(), wire_v10, signing_key=list(keys)).card_body)
    if alter is not None:
        alter(document)
    return card_signature.signed_content(document)


def entry_with(header, signature):
    return {"protected": b64url(json.dumps(header).encode()), "signature": b64url(signature)}


def test_each_pin_checks_the_one_signature_of_its_own_algorithm():
    signed = signed_card(RSA, EC, ED)
    for key in (RSA, EC, ED):
        assert card_signature.unproven(signed, key.public) is None
    assert card_signature.unproven(signed, RFC7515.public).startswith("has a card whose signature does not verify under the pinned key, and names another key")
    assert card_signature.unproven(signed_card(RSA), EC.public) == \
        "has a card with no ES256 signature the pinned key could check"
    assert card_signature.unproven(signed_card(EC), ED.public) == \
        "has a card with no EdDSA signature the pinned key could check"


def relabelled(alg, key_for_signature):
    """The attacker's move: a signature entry whose header names `alg` (and billing's kid),
    made with `key_for_signature` as that alg's module would make it, or HMAC keyed with the
    pinned public key's JWK (HS256 confusion)."""
    def alter(document):
        header = {"alg": alg, "kid": EC.public.jwk()["kid"], "typ": "JOSE"}
        protected = b64url(json.dumps(header).encode())
        data = f"{protected}.{b64url(card_signature.payload(document))}".encode()
        if key_for_signature is None:
            signature = b""
        elif key_for_signature == "hmac":
            signature = hmac.digest(json.dumps(EC.public.jwk()).encode(), data, hashlib.sha256)
        else:
            signature = algorithms.module_of(key_for_signature).sign(key_for_signature, data)
        document["signatures"] = [{"protected": protected, "signature": b64url(signature)}]
    return alter


@pytest.mark.parametrize("alg, signer", [("none", None), ("HS256", "hmac"), ("RS256", RSA), ("EdDSA", ED),
                                         ("ES384", EC), ("es256", EC)])  # the last two: the pinned key's own ES256
def test_a_header_alg_other_than_the_pins_is_never_tried_against_an_ec_pin(alg, signer):
    signed = signed_card(EC, alter=relabelled(alg, signer))
    assert card_signature.unproven(signed, EC.public) == "has a card with no ES256 signature the pinned key could check"


def test_an_es256_header_over_an_rsa_or_ed25519_pin_is_not_tried():
    signed = signed_card(RSA, ED, alter=lambda document: document["signatures"].append(
        entry_with({"alg": "ES256", "kid": RSA.public.jwk()["kid"]}, es256.sign(RFC7515, b"x"))))
    assert card_signature.unproven(signed, RSA.public) is None and card_signature.unproven(signed, ED.public) is None
    only_es = signed_card(RSA, alter=lambda document: document.update(signatures=document["signatures"][1:] + [
        entry_with({"alg": "ES256", "kid": RSA.public.jwk()["kid"]}, es256.sign(RFC7515, b"x"))]))
    for key in (RSA, ED):
        assert "no " + key.ALGORITHM + " signature" in card_signature.unproven(only_es, key.public)


def test_a_kid_jwk_or_jku_in_the_header_never_chooses_the_key():
    def offer_own_key(document):  # signed by the attacker's EC key, naming billing's kid and offering its own key
        document.pop("signatures")
        resigned = card_signature.sign(document, RFC7515)
        header = {"alg": "ES256", "kid": EC.public.jwk()["kid"], "jwk": RFC7515.public.jwk(),
                  "jku": "https://x.example/"}
        protected = b64url(json.dumps(header).encode())
        data = f"{protected}.{b64url(card_signature.payload(document))}".encode()
        document["signatures"] = [{"protected": protected, "signature": b64url(es256.sign(RFC7515, data))}]
        assert resigned["signatures"]
    agent, printer, _ = support_agent([AllowEntry(BILLING.name, BILLING.endpoint, EC.public)], wire="1.0",
                                      apps={billing.BASE_URL: served(EC, alter=offer_own_key)})
    outcome = agent.handle(BILLING_CARD, "process_refund", {"order_id": "ORD-5", "amount": 5})
    assert outcome.refused and len(printer.sent_to(billing.BASE_URL)) == 1  # the card only; nothing fetched for jku
    assert [frame.url for frame in printer.frames if "x.example" in frame.url] == []


def served(*keys, alter=None):
    app = PeerApp(billing.billing_agent(), wire_v10, signing_key=list(keys))
    if alter is not None:
        document = json.loads(app.card_body)
        alter(document)
        app.card_body = json.dumps(document).encode()
    return app


@pytest.mark.parametrize("key", [EC, ED], ids=["ES256", "EdDSA"])
def test_the_gate_trusts_a_card_signed_by_a_pinned_ec_or_ed25519_key_and_refuses_it_altered(key, capsys):
    for alter, why in ((None, None), (lambda document: document.update(description="Refunds: no limit."),
                                      "has a card whose signature does not verify under the pinned key: altered "
                                      "after it was signed")):
        agent, printer, _ = support_agent([AllowEntry(BILLING.name, BILLING.endpoint, key.public)], wire="1.0",
                                          printed=True, apps={billing.BASE_URL: served(key, alter=alter)})
        outcome = agent.handle(BILLING_CARD, "process_refund", {"order_id": "ORD-5", "amount": 5})
        posts = [frame for frame in printer.sent_to(billing.BASE_URL) if frame.http_method == "POST"]
        out = capsys.readouterr().out
        if why is None:
            assert outcome.trusted and len(posts) == 1 and "its card is signed by the pinned key" in out
        else:
            assert outcome.refused and posts == [] and f"[trust] 'billing-agent' {why}" in out


def test_a_card_with_a_thousand_signatures_is_checked_only_as_far_as_the_bound():
    garbage = entry_with({"alg": "EdDSA", "kid": ED.public.jwk()["kid"]}, bytes(64))
    signed = signed_card(ED, alter=lambda document: document.update(signatures=[garbage] * 1000
                                                                    + document["signatures"]))
    assert len(signed.signatures) == card_signature.MAX_SIGNATURES
    assert card_signature.unproven(signed, ED.public).startswith(
        "has a card whose signature does not verify under the pinned key: altered after it was signed")


def test_the_demo_keys_are_marked_demo_and_their_pins_are_what_the_lesson_reads():
    for algorithm, key in (("ES256", EC), ("EdDSA", ED)):
        assert (ROOT / "peers" / "keys" / f"billing-agent.DEMO-KEY.{algorithm}.json").exists()
        pin = json.loads((ROOT / "peers" / "support" / "keys" / f"billing-agent.{algorithm}.jwk.json").read_text())
        assert algorithms.public_from_jwk(pin) == key.public and pin["kid"] == key.public.jwk()["kid"]
    with pytest.raises(ValueError, match="none of RS256, ES256, EdDSA"):
        demo_key("billing-agent", ["HS256"])


@pytest.mark.parametrize("document, why", [
    ('{"kty": "EC", "crv": "P-256", "x": "%(x)s", "y": "%(y)s", "d": "%(d)s", "d": "%(x)s"}', "duplicate key 'd'"),
    ('{"kty": "EC", "crv": "P-256", "x": "%(x)s", "y": "%(y)s", "d": "%(d)s", "n": NaN}', "NaN is not JSON"),
])
def test_a_signing_key_jwk_only_a_lenient_reader_takes_is_refused_in_one_line(tmp_path, document, why):
    """`serve --signing-key` read its JWK leniently: of two "d"s it signed with the last, and took NaN."""
    from conftest import cli
    key = json.loads((Path(__file__).parent.parent / "peers/keys/billing-agent.DEMO-KEY.ES256.json").read_text())
    path = tmp_path / "key.json"
    path.write_text(document % key)
    done = cli("serve", "billing-agent", "--wire", "1.0", "--port", "0", "--signing-key", str(path), timeout=15)
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"error: --signing-key {path}: ") and why in done.stderr, done.stderr


def test_rs256_signs_blinded_yet_each_signature_is_the_textbook_one_and_verifies():
    """Blinding (a random factor raised, then divided out) hides the key's timing; RS256 (PKCS#1 v1.5) is
    deterministic all the same: every signature is the message's encoding raised to d, as RFC 8017 8.2.1 says."""
    key = rs256.private_from_pem((Path(__file__).parent / "keys" / "other.pem").read_text())
    size = key.public.size
    for n in range(5):
        data = f"message {n}".encode() * n
        digest = bytes.fromhex("3031300d060960864801650304020105000420") + hashlib.sha256(data).digest()
        encoded = int.from_bytes(b"\x00\x01" + b"\xff" * (size - len(digest) - 3) + b"\x00" + digest, "big")
        signature = rs256.sign(key, data)
        assert signature == pow(encoded, key.d, key.n).to_bytes(size, "big") == rs256.sign(key, data)
        assert rs256.verify(key.public, data, signature)
