"""When a certificate is valid: the notBefore and notAfter of the first one in a PEM file.

RFC 5280 4.1: Certificate is SEQUENCE { tbsCertificate, ... }, and tbsCertificate is
SEQUENCE { [0] version OPTIONAL, serialNumber, signature, issuer, validity, ... } with
validity SEQUENCE { notBefore, notAfter }, each a UTCTime (YYMMDDHHMMSSZ, 19YY from 50
on, 4.1.2.5.1) or a GeneralizedTime (YYYYMMDDHHMMSSZ). Read here since the standard
library reads certificates only privately (ssl._ssl._test_decode_cert), and only that
path, by a DER reader that checks every length against the bytes there are: a file of any
bytes is a ValueError at worst, never a read past its end. Why a server asks (tls.py): one
serving a certificate outside its dates starts fine, then fails every client's handshake
in the client's words ("certificate has expired"), far from the cause. Not here: whether
the certificate is any good otherwise (OpenSSL's load_cert_chain says).
"""
from __future__ import annotations

import binascii
import datetime
import re

MOST = 1 << 20  # bytes of a PEM file read: a certificate chain is a few kilobytes
# The first block OpenSSL takes as the certificate served (it skips others: a key before it)
BEGIN = re.compile(rb"-----BEGIN ((?:TRUSTED |X509 )?CERTIFICATE)-----")
UTC_TIME, GENERALIZED_TIME, SEQUENCE = 0x17, 0x18, 0x30
NOT_X509 = "its certificate is not shaped as X.509 says"


def dates_in(pem: bytes) -> tuple[datetime.datetime, datetime.datetime] | None:
    """(notBefore, notAfter), in UTC, of the first certificate in `pem`; None when it holds
    no PEM certificate block; ValueError for a block that is not an X.509 certificate."""
    pem = pem[:MOST]
    begin = BEGIN.search(pem)
    if begin is None:
        return None
    end = pem.find(b"-----END " + begin.group(1) + b"-----", begin.end())
    if end < 0:
        raise ValueError("its certificate block has no END line")
    try:  # TRUSTED CERTIFICATE's trust settings follow the certificate: only the first element is read
        der = binascii.a2b_base64(pem[begin.end():end])
    except binascii.Error:
        raise ValueError("its certificate is not base64") from None
    _, at, end = _one(der, 0, len(der), SEQUENCE)
    _, at, end = _one(der, at, end, SEQUENCE)  # tbsCertificate
    if at < end and der[at] == 0xA0:  # [0] EXPLICIT version
        at = _one(der, at, end)[2]
    for _ in range(3):  # serialNumber, signature, issuer
        at = _one(der, at, end)[2]
    _, at, end = _one(der, at, end, SEQUENCE)  # validity
    not_before = _one(der, at, end)
    return _time(der, not_before), _time(der, _one(der, not_before[2], end))


def _one(der: bytes, at: int, end: int, tag: int | None = None) -> tuple[int, int, int]:
    """The element at `at`, which must end by `end`: its tag, where its contents begin, where it ends."""
    if at + 2 > end:
        raise ValueError("its certificate ends early")
    found = der[at]
    if tag is not None and found != tag or found & 0x1F == 0x1F:  # a tag number in more bytes: none on this path
        raise ValueError(NOT_X509)
    length, at = der[at + 1], at + 2
    if length & 0x80:  # long form: the length in the next 1-4 bytes (0x80 alone, indefinite, is BER)
        count = length & 0x7F
        if not 1 <= count <= 4 or at + count > end:
            raise ValueError("its certificate has a length DER does not allow")
        length, at = int.from_bytes(der[at:at + count], "big"), at + count
    if at + length > end:
        raise ValueError("its certificate ends early")
    return found, at, at + length


def _time(der: bytes, element: tuple[int, int, int]) -> datetime.datetime:
    tag, text = element[0], der[element[1]:element[2]]
    digits = {UTC_TIME: 12, GENERALIZED_TIME: 14}.get(tag)
    if digits is None or len(text) != digits + 1 or not text.endswith(b"Z") or not text[:-1].isdigit():
        raise ValueError("its certificate's dates are not times as RFC 5280 spells them")
    if tag == UTC_TIME:
        year = int(text[:2])
        text = str(year + (1900 if year >= 50 else 2000)).encode() + text[2:]
    try:
        return datetime.datetime(int(text[:4]), *(int(text[n:n + 2]) for n in range(4, 14, 2)),
                                 tzinfo=datetime.timezone.utc)
    except ValueError:  # month 13, hour 25
        raise ValueError("its certificate's dates are not times as RFC 5280 spells them") from None


def outside_dates(pem: bytes, now: datetime.datetime) -> str | None:
    """Why the first certificate in `pem` is not valid at `now`, in a few words; None if it is
    (or holds no certificate block to judge). ValueError for one that cannot be read."""
    dates = dates_in(pem)
    if dates is None or dates[0] <= now <= dates[1]:
        return None
    valid = f"valid from {_said(dates[0])} to {_said(dates[1])}, and it is {_said(now)} now"
    return f"the certificate has expired ({valid})" if now > dates[1] else f"the certificate is not valid yet ({valid})"


def _said(moment: datetime.datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")
