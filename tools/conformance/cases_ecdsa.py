"""The ECDSA-Sig-Value family (issue 25; found by mutant 20261203:715, a bit flipped in the
length of s): each case is one change to an ECDSA-Sig-Value the kernel accepts, written
where the kernel decodes one: a SignerInfo's signature and an embedded certificate's
self-signature.  The kernel decodes it with its BER decoder and ecdsa_get_signature_rs
(crypto/ecdsa-x962.c), then checks 0 < r, s < n (crypto/ecdsa.c _ecdsa_verify); modsign
mirrors both in cms/ecdsa_x962 and cms/ecdsa."""
from .der import Node, enc_len, oid, parse
from .cases_common import embed_certs

# Base point orders (FIPS 186-5 / SEC 2) by bytes per coordinate as the kernel holds them.
ORDERS = {
    32: int("FFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551", 16),
    48: int("FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFC7634D81F4372DDF581A0DB248B0A77AECEC196ACCC52973", 16),
}


def _int(v):
    """DER INTEGER content of a non-negative number."""
    return v.to_bytes(max(1, (v.bit_length() + 8) // 8), "big")


def _tlv(tag, content, lenoct=None):
    return bytes([tag]) + (enc_len(len(content)) if lenoct is None else lenoct) + content


def _seq(*parts, tag=0x30):
    body = b"".join(parts)
    return _tlv(tag, body)


def variants(bufsize):
    """[(name, description, fn)]: fn(r, s) -> the ECDSA-Sig-Value bytes, r and s the integers
    of a valid signature on a curve of `bufsize` bytes per coordinate."""
    n = ORDERS[bufsize]
    R = lambda r: _tlv(0x02, _int(r))  # noqa: E731

    def padded(v, size, lead=b"\0"):
        raw = v.to_bytes(bufsize, "big")
        return _tlv(0x02, lead * (size - bufsize) + raw if size > bufsize else raw[bufsize - size:])

    out = [
        ("valid", "the signature as made (strict DER)", lambda r, s: _seq(R(r), R(s))),
        ("after-sequence", "two zero octets after the SEQUENCE (outside it)",
         lambda r, s: _seq(R(r), R(s)) + b"\0\0"),
        ("inside-sequence", "a NULL after s inside the SEQUENCE", lambda r, s: _seq(R(r), R(s), b"\x05\x00")),
        ("sequence-primitive", "the SEQUENCE's identifier 0x10 (primitive)",
         lambda r, s: _seq(R(r), R(s), tag=0x10)),
        ("sequence-indefinite", "the SEQUENCE in indefinite length with its end-of-contents",
         lambda r, s: b"\x30\x80" + R(r) + R(s) + b"\0\0"),
        ("sequence-indefinite-no-eoc", "the SEQUENCE in indefinite length, no end-of-contents",
         lambda r, s: b"\x30\x80" + R(r) + R(s)),
        ("sequence-only-r", "the SEQUENCE holds r alone", lambda r, s: _seq(R(r))),
        ("r-empty", "r an empty INTEGER", lambda r, s: _seq(_tlv(0x02, b""), R(s))),
        ("s-empty", "s an empty INTEGER", lambda r, s: _seq(R(r), _tlv(0x02, b""))),
        ("r-zero", "r = 0", lambda r, s: _seq(R(0), R(s))),
        ("s-zero", "s = 0", lambda r, s: _seq(R(r), R(0))),
        ("r-is-n", "r = n (the curve order)", lambda r, s: _seq(R(n), R(s))),
        ("s-is-n", "s = n", lambda r, s: _seq(R(r), R(n))),
        ("s-plus-n", "s + n (the same residue, beyond n)", lambda r, s: _seq(R(r), R(s + n))),
        ("s-negated", "s replaced by n - s (the other valid s)", lambda r, s: _seq(R(r), R(n - s))),
        ("s-negated-unsigned", "n - s written in its minimal unsigned octets (no sign octet)",
         lambda r, s: _seq(R(r), _tlv(0x02, (n - s).to_bytes(((n - s).bit_length() + 7) // 8, "big")))),
        ("r-swapped-s", "r and s swapped", lambda r, s: _seq(R(s), R(r))),
        ("r-bufsize-plus-1", "r padded with zeros to the curve's size plus one octet",
         lambda r, s: _seq(padded(r, bufsize + 1), R(s))),
        ("r-bufsize-plus-2", "r padded with zeros to the curve's size plus two octets",
         lambda r, s: _seq(padded(r, bufsize + 2), R(s))),
        ("r-bufsize-plus-1-lead-01", "r at the curve's size, then 01 put in front",
         lambda r, s: _seq(_tlv(0x02, b"\x01" + r.to_bytes(bufsize, "big")), R(s))),
        ("r-bufsize-unsigned", "r in exactly the curve's size, no sign octet (negative in DER when its "
         "high bit is set)", lambda r, s: _seq(padded(r, bufsize), R(s))),
        ("r-length-long-form", "r's length in the long form (0x81 NN)",
         lambda r, s: _seq(_tlv(0x02, _int(r), b"\x81" + bytes([len(_int(r))])), R(s))),
        ("r-length-3-octets", "r's length in three octets (0x83 00 00 NN)",
         lambda r, s: _seq(_tlv(0x02, _int(r), b"\x83\0\0" + bytes([len(_int(r))])), R(s))),
        ("r-constructed", "r's identifier 0x22 (constructed INTEGER)",
         lambda r, s: _seq(_tlv(0x22, _int(r)), R(s))),
        ("r-indefinite", "r in indefinite length", lambda r, s: _seq(b"\x02\x80" + _int(r) + b"\0\0", R(s))),
        ("r-length-overrun", "r's length one past the SEQUENCE's end",
         lambda r, s: _seq(_tlv(0x02, _int(r), enc_len(len(_int(r)) + len(R(s)) + 1)), R(s))),
        ("s-octet-string", "s tagged OCTET STRING", lambda r, s: _seq(R(r), _tlv(0x04, _int(s)))),
        ("r-too-long-then-no-s", "r of the curve's size plus two octets and no s (the action on r "
         "runs before the SEQUENCE's end is checked)", lambda r, s: _seq(padded(r, bufsize + 2))),
        ("empty", "no octets at all", lambda r, s: b""),
    ]
    return out


def _rs(der):
    seq = parse(der)[0]
    return int.from_bytes(seq.kids[0].val, "big"), int.from_bytes(seq.kids[1].val, "big")


def bufsize_of(der):
    """The curve's size as the kernel holds it, from a valid signature's r and s (P-256 or
    P-384: an r and s both under 2^256 on P-384 has probability 2^-256)."""
    r, s = _rs(der)
    return 32 if max(r, s).bit_length() <= 256 else 48


def signerinfo_cases(build, prefix, what):
    """The family in a SignerInfo's signature.  build() -> (P7, finish) where finish(p7) makes
    the module."""
    probe, _ = build()
    size = bufsize_of(probe.sig().val)
    cases = []
    for name, desc, fn in variants(size):
        def f(fn=fn):
            p, finish = build()
            p.sig().val = fn(*_rs(p.sig().val))
            return finish(p)
        cases.append(("%s-%s" % (prefix, name), "%s: ECDSA-Sig-Value %s" % (what, desc), f))
    return cases


def cert_cases(c, prefix, key="ecdsa"):
    """The family in the self-signature of the test key's certificate, embedded in a message
    that key signed (x509_cert_parse verifies a self-signed certificate as it parses it)."""
    def cert_sig(cert):
        return cert.kids[2].val[1:]  # the BIT STRING's unused-bits octet first
    size = bufsize_of(cert_sig(c.cert_node(key)))
    cases = []
    for name, desc, fn in variants(size):
        def f(fn=fn):
            cert = c.cert_node(key)
            cert.kids[2] = Node(0x03, val=b"\0" + fn(*_rs(cert_sig(cert))))
            p = c.p7(key, deterministic=True)
            embed_certs(p, [cert])
            return c.mod(p)
        cases.append(("%s-%s" % (prefix, name), "test %s certificate embedded, its self-signature's "
                      "ECDSA-Sig-Value %s" % (key, desc), f))
    return cases


CURVES = [("p192", "1.2.840.10045.3.1.1"), ("p256", "1.2.840.10045.3.1.7"), ("p521", "1.3.132.0.35"),
          ("secp256k1", "1.3.132.0.10")]


def curve_cases(c, key="ecdsa"):
    """The test P-384 certificate embedded with its subjectPublicKeyInfo's namedCurve changed
    (x509_extract_key_data's curves, and one it does not know), in a message that key signed."""
    cases = []
    for name, curve in CURVES:
        def f(curve=curve):
            cert = c.cert_node(key)
            tbs = cert.kids[0]
            spki = tbs.kids[6 if tbs.kids[0].tag == 0xa0 else 5]
            spki.kids[0].kids[1] = oid(curve)
            p = c.p7(key, deterministic=True)
            embed_certs(p, [cert])
            return c.mod(p)
        cases.append(("ecdsa-cert-curve-" + name, "test ECDSA P-384 certificate embedded, its key's namedCurve %s (%s)"
                      % (name, curve), f))
    return cases


def mldsa_kernel_ecdsa_cases(c):
    """Both places on the built kernels, which trust the test ECDSA P-384 key: its SignerInfo
    with the certificate embedded (pkcs7_verify_one passes the errno on) and without (the
    trusted keyring: pkcs7_validate_trust_one makes every failure EKEYREJECTED)."""
    def embedded():
        p = c.p7("ecdsa", deterministic=True)
        embed_certs(p, [c.cert_node("ecdsa")])
        return p, c.mod

    def bare():
        return c.p7("ecdsa", deterministic=True), c.mod
    return (signerinfo_cases(embedded, "ecdsa-sig-embedded", "test ECDSA P-384 signer, certificate embedded") +
            signerinfo_cases(bare, "ecdsa-sig", "test ECDSA P-384 signer") +
            cert_cases(c, "ecdsa-cert-sig") + curve_cases(c))
