"""Regression cases from the mutation campaign (mutate.py): for each disagreement between a
kernel and modsign that the campaign found, the smallest mutant that still showed it (one
node or a few bytes changed), kept as a named case of the fixed suite.  The comment of each
names the mutation class and id that found it and the kernel rule it taught (the mirror
fixed in the library; tests/test_kernel_mutants.cpp has the unit tests)."""
from .der import Node, P7, enc_len, oid
from .cases_common import embed_certs


def _explicit_trailing(c):
    # contentinfo.content.value.append-null (e.g. 20261201:...): [0] EXPLICIT holds one SignedData.
    p = c.p7("mldsa65", deterministic=True)
    p.ci.kids[1].kids.append(Node(0x05, val=b""))
    return c.mod(p)


def _indefinite_digest_alg(c):
    # signerinfo.digestAlgorithm.length.indefinite: the end-of-contents octets are taken as
    # the absent optional parameters (EBADMSG).
    p = c.p7("mldsa65", deterministic=True)
    p.si().kids[2].lenform = "indef"
    return c.mod(p)


def _empty_cert_set(c):
    # signeddata.certificates.value.drop-last: certificates [0] with no certificate (loads).
    p = c.p7("mldsa65", deterministic=True)
    embed_certs(p, [])
    return c.mod(p)


def _mldsa_z_out_of_range(c, embed):
    # pkcs7.zeroes / pkcs7.bitflip in the signature: z coefficient 0 decodes to gamma1, which
    # mldsa_verify's sigDecode refuses (EBADMSG).  pkcs7_verify_one passes that errno on when
    # the signer's certificate is in the message; against the trusted keyring
    # (pkcs7_validate_trust_one) every failure becomes EKEYREJECTED.
    p = c.p7("mldsa65", deterministic=True)
    s = bytearray(p.sig().val)
    s[48:51] = b"\0\0" + bytes([s[50] & 0xf0])
    p.sig().val = bytes(s)
    if embed:
        embed_certs(p, [c.cert_node("mldsa65")])
    return c.mod(p)


def _cert_edit(c, key, edit):
    p = c.p7(key, deterministic=True)
    cert = c.cert_node(key)
    edit(cert)
    embed_certs(p, [cert])
    return c.mod(p)


def _tbs_trailing(cert):
    # certificate.tbs.value.append-null: TBSCertificate ends after the extensions.
    cert.kids[0].kids.append(Node(0x05, val=b""))


def _sigalg_params_twice(cert):
    # certificate.signatureAlgorithm.params.duplicate: AlgorithmIdentifier is { OID, ANY OPTIONAL }.
    cert.kids[1].kids += [Node(0x05, val=b""), Node(0x05, val=b"")]


def _outer_sigalg_differs(cert):
    # certificate.signatureAlgorithm.oid.oid-swap: x509_note_signature wants both OIDs equal (EINVAL).
    cert.kids[1].kids[0] = oid("2.16.840.1.101.3.4.3.19")


def _tbs_sigalg_unknown(cert):
    # certificate.tbs.signature.oid.value.leading-zero: x509_note_sig_algo ENOPKG (loads tainted).
    o = cert.kids[0].kids[2].kids[0]
    o.val = b"\0" + o.val


def _subject_rdn_long_form(cert):
    # certificate.tbs.subject.inner.length.long-form: BER lengths are accepted; the subject's
    # contents now differ from the issuer's, so the certificate is not self-signed (loads).
    rdn = cert.kids[0].kids[5].kids[0]
    rdn.lenform = lambda n: bytes([0x81, n])


def _key_usage_malformed(cert):
    # certificate.tbs.extensions.inner.value.random: x509_process_extension checks keyUsage (EBADMSG).
    for ext in cert.kids[0].kids[-1].kids[0].kids:
        if ext.kids[0].val == oid("2.5.29.15").val:
            ext.kids[-1].val = b"\x0f\x97\xb0\x92"


def _subject_empty(cert):
    # certificate.tbs.subject.value.empty: a Name holds at least one RDN (EBADMSG).
    cert.kids[0].kids[5].kids = []


def _validity_one_time(cert):
    # certificate.tbs.validity.inner.remove (20261201:9948): Time is a CHOICE, skipped at the
    # end of Validity; the certificate parses, its self-signature fails (EKEYREJECTED).
    cert.kids[0].kids[4].kids.pop()


def _key_bits(cert, edit):
    # The subjectPublicKey BIT STRING's key bytes (after the unused-bits octet), edited.
    bits = cert.kids[0].kids[6].kids[1]
    bits.val = b"\0" + edit(bits.val[1:])


def _rsa_key_trailing(cert):
    # certificate.tbs.subjectPublicKeyInfo.inner.value.append (20261201:4152): rsa_parse_pub_key
    # ignores bytes after RsaPubKey; the key is read when the self-signature is checked, which
    # fails over the changed TBS (EKEYREJECTED).  modsign had refused the certificate (EBADMSG).
    _key_bits(cert, lambda k: k + b"\0")


def _ec_point_zeroed(cert):
    # pkcs7.zeroes over an ECDSA certificate's key (20261201:1079): ecdsa_set_pub_key takes the
    # uncompressed form only (EINVAL), met when the self-signature is checked.
    _key_bits(cert, lambda k: b"\0" + k[1:])


def _mldsa_key_long(cert):
    # certificate.tbs.subjectPublicKeyInfo.inner.value.append (20261201:3187): one byte more
    # than crypto_mldsa_set_pub_key's length (EINVAL).
    _key_bits(cert, lambda k: k + b"\0")


def _mldsa_spki_null_params(cert):
    # certificate.tbs.subjectPublicKeyInfo.inner.value.append-null (20261201:6927): the kernel
    # keeps ML-DSA's key with NULL parameters (OpenSSL refuses it); the self-signature over
    # the changed TBS fails (EKEYREJECTED).
    cert.kids[0].kids[6].kids[0].kids.append(Node(0x05, val=b""))


def _signeddata_indefinite_version_long(c):
    # signeddata.length.indefinite + signeddata.version.length.plus-one (20261201:1992): the
    # decoder walks into the indefinite SignedData and pkcs7_note_signeddata_version refuses
    # the 2-byte version (EINVAL) before the misaligned bytes after it are met.
    p = c.p7("mldsa65", deterministic=True)
    sd = p.ci.kids[1].kids[0]
    sd.lenform = "indef"
    sd.kids[0].lenform = lambda n: bytes([n + 1])
    return c.mod(p)


def _signerinfos_indefinite_signeddata_short(c, key):
    # signeddata.length.minus-one + signeddata.signerInfos.length.indefinite (20261201:5877):
    # the SignedData ends inside the signerInfos' end-of-contents octets.  The SignerInfo is
    # read first (ML-DSA on a 6.x kernel: ENOPKG, loads tainted), then the missing octet is
    # a data overrun (EBADMSG).
    p = c.p7(key, deterministic=True)
    sd = p.ci.kids[1].kids[0]
    sd.kids[-1].lenform = "indef"
    sd.lenform = lambda n: enc_len(n - 1)
    return c.mod(p)


def _signerinfos_missing(c, indefinite):
    # signeddata.value.drop-last (+ signeddata.encapContentInfo.length.indefinite, 20261203:2121):
    # no signerInfos.  The decoder's final check of that CHOICE tests whether the last tag it
    # read matched: after a definite contentInfo it did (zero signers: EINVAL from
    # pkcs7_check_authattrs); an indefinite contentInfo without content, or an indefinite
    # SignedData, leaves its end-of-contents octets read as an unmatched tag (EBADMSG).
    p = c.p7("mldsa65", deterministic=True)
    sd = p.ci.kids[1].kids[0]
    del sd.kids[-1]
    if indefinite == "encap":
        sd.kids[2].lenform = "indef"
    elif indefinite == "signeddata":
        sd.lenform = "indef"
    return c.mod(p)


def mutant_cases(c):
    """The regression cases (name, description, builder) for the built 7.2 kernels."""
    out = [
        ("mut-explicit0-trailing-null", "ML-DSA-65: a NULL after the SignedData inside ContentInfo's [0] EXPLICIT",
         lambda: _explicit_trailing(c)),
        ("mut-digestalg-indefinite", "ML-DSA-65: SignerInfo digestAlgorithm in indefinite length, no parameters",
         lambda: _indefinite_digest_alg(c)),
        ("mut-certset-empty", "ML-DSA-65: certificates [0] present with no certificate", lambda: _empty_cert_set(c)),
        ("mut-mldsa-z-out-of-range", "ML-DSA-65 signature whose first z coefficient is encoded as 0 (sigDecode)",
         lambda: _mldsa_z_out_of_range(c, False)),
        ("mut-mldsa-z-out-of-range-embedded-cert", "the same, the signer's certificate embedded",
         lambda: _mldsa_z_out_of_range(c, True)),
    ]
    out += [
        ("mut-signeddata-indefinite-version-long", "ML-DSA-65: indefinite SignedData, version INTEGER one byte long",
         lambda: _signeddata_indefinite_version_long(c)),
        ("mut-signerinfos-indefinite-signeddata-short", "ML-DSA-65: indefinite signerInfos, SignedData one byte short",
         lambda: _signerinfos_indefinite_signeddata_short(c, "mldsa65")),
        ("mut-signerinfos-missing", "ML-DSA-65: SignedData without signerInfos",
         lambda: _signerinfos_missing(c, None)),
        ("mut-signerinfos-missing-encap-indefinite", "the same, contentInfo (no content) in indefinite length",
         lambda: _signerinfos_missing(c, "encap")),
        ("mut-signerinfos-missing-signeddata-indefinite", "the same, SignedData in indefinite length",
         lambda: _signerinfos_missing(c, "signeddata")),
        ("mut-rsa-cert-key-trailing-byte", "embedded RSA certificate: a byte after RsaPubKey in subjectPublicKey",
         lambda: _cert_edit(c, "rsa", _rsa_key_trailing)),
        ("mut-ecdsa-cert-point-zeroed", "embedded ECDSA certificate: the point's 04 octet zeroed",
         lambda: _cert_edit(c, "ecdsa", _ec_point_zeroed)),
        ("mut-mldsa44-cert-key-long", "embedded ML-DSA-44 certificate: public key one byte long",
         lambda: _cert_edit(c, "mldsa44", _mldsa_key_long)),
        ("mut-mldsa65-cert-spki-null-params", "embedded ML-DSA-65 certificate: NULL parameters in its key's algorithm",
         lambda: _cert_edit(c, "mldsa65", _mldsa_spki_null_params)),
    ]
    for key in ("rsa", "mldsa65"):
        for name, desc, edit in [
            ("cert-tbs-trailing-null", "embedded certificate: a NULL after the extensions in TBSCertificate", _tbs_trailing),
            ("cert-sigalg-params-twice", "embedded certificate: signatureAlgorithm with two NULL parameters",
             _sigalg_params_twice),
            ("cert-sigalg-differs", "embedded certificate: signatureAlgorithm id-ml-dsa-87, TBS says otherwise",
             _outer_sigalg_differs),
            ("cert-tbs-sigalg-unknown", "embedded certificate: tbsCertificate.signature OID with a leading 0 byte",
             _tbs_sigalg_unknown),
            ("cert-subject-rdn-long-form", "embedded certificate: the subject's first RDN length in long form",
             _subject_rdn_long_form),
            ("cert-keyusage-malformed", "embedded certificate: keyUsage value 0f 97 b0 92", _key_usage_malformed),
            ("cert-subject-empty", "embedded certificate: empty subject Name", _subject_empty),
            ("cert-validity-one-time", "embedded certificate: Validity without notAfter", _validity_one_time),
        ]:
            out.append(("mut-%s-%s" % (key, name), "%s, %s" % (key, desc),
                        lambda k=key, e=edit: _cert_edit(c, k, e)))
    return out
