"""Cases for the Linux 7.2 kernels built by tools/build-test-kernel (trusted test keys)."""
import hashlib

from .der import (Node, OID_CT, OID_MD, OID_MS_INDIRECT, OID_SHA256, OID_SIGNING_TIME,
                  OID_SMIMECAP, oid)
from .cases_common import ALGS, OTHER_HASHES, TOKEN_KEYS, common_malformed, embed_certs, gost_cert_cases, md_node
from .cases_remote import remote_cases
from .cases_mutants import mutant_cases
from .cases_ecdsa import mldsa_kernel_ecdsa_cases
from .cases_producers import producer_cases


def mldsa_cases(c):
    """All cases for the built Linux 7.2 kernels (trusted test keys)."""
    cases = []

    def add(name, desc, fn):
        cases.append((name, desc, fn))

    for alg in ALGS:
        add("%s-default" % alg, "%s, no signedAttrs, SHA-512, issuer+serial" % alg,
            lambda a=alg: c.sign(a))
        add("%s-keyid" % alg, "%s, no signedAttrs, SHA-512, SKID" % alg,
            lambda a=alg: c.sign(a, keyid=True))
        add("%s-signedattrs" % alg, "%s, signedAttrs, SHA-512, issuer+serial" % alg,
            lambda a=alg: c.sign(a, attrs=True))
        add("%s-signedattrs-keyid" % alg, "%s, signedAttrs, SHA-512, SKID" % alg,
            lambda a=alg: c.sign(a, attrs=True, keyid=True))

        def with_cert(a=alg, attrs=False):
            p = c.p7(a, attrs=attrs)
            embed_certs(p, [c.cert_node(a)])
            return c.mod(p)
        add("%s-embedded-cert" % alg, "%s, no signedAttrs, signer certificate embedded" % alg, with_cert)
    add("mldsa65-signedattrs-embedded-cert", "ML-DSA-65, signedAttrs, signer certificate embedded",
        lambda: (lambda p: (embed_certs(p, [c.cert_node("mldsa65")]), c.mod(p))[1])(c.p7("mldsa65", attrs=True)))
    for alg in ["rsa", "ecdsa", "mldsa65"]:
        for h in OTHER_HASHES:
            add("%s-%s" % (alg, h), "%s, no signedAttrs, digestAlgorithm %s" % (alg, h),
                lambda a=alg, hh=h: c.sign(a, hash_=hh))
    add("rsa-signedattrs-sha256", "RSA, signedAttrs, SHA-256 (§9.24)",
        lambda: c.sign("rsa", attrs=True, hash_="sha256"))
    # Token keys (issue 15 §1), signed through their pkcs11: URIs; the three the 7.2 nowaive
    # kernel alone trusts (rsa2048, rsa4096, ecdsa-p256) are unknown keys on the others.
    for k in TOKEN_KEYS:
        add("token-%s" % k, "%s test key imported into a SoftHSM2 token, signed through its pkcs11: URI" % k,
            lambda a=k: c.token_sign(a))
    add("token-rsa2048-sign-file", "rsa2048 token key, modsign sign-file sha256 with a pkcs11: key argument",
        lambda: c.token_sign("rsa2048", via="sign-file"))
    add("token-ecdsa-p256-batch", "ecdsa-p256 token key, one module of a batch (modsign sign -j2 -r DIR)",
        lambda: c.token_sign("ecdsa-p256", via="batch"))
    # Keys the kernel does not trust.
    add("unknown-rsa", "RSA key not in the keyring (§9.30)", lambda: c.sign("untrusted-rsa"))
    add("unknown-mldsa65", "ML-DSA-65 key not in the keyring (§9.30)", lambda: c.sign("untrusted-mldsa65"))
    add("unknown-mldsa65-embedded-cert", "untrusted ML-DSA-65 key, its certificate embedded",
        lambda: (lambda p: (embed_certs(p, [c.cert_node("untrusted-mldsa65")]), c.mod(p))[1])(c.p7("untrusted-mldsa65")))
    add("blacklisted-rsa", "signed by the built-in certificate whose tbs: is blacklisted",
        lambda: c.sign("blacklisted-rsa"))
    add("s9.31-blacklisted-embedded", "blacklisted certificate embedded in the message (§9.31)",
        lambda: (lambda p: (embed_certs(p, [c.cert_node("blacklisted-rsa")]), c.mod(p))[1])(c.p7("blacklisted-rsa")))

    def two_signers(a, b, attrs_a=False):
        def f():
            pa, pb = c.p7(a, attrs=attrs_a), c.p7(b)
            pa.sinfos.kids.append(pb.si())
            return c.mod(pa)
        return f
    add("two-signers-rsa-mldsa65", "two valid signers, RSA and ML-DSA-65", two_signers("rsa", "mldsa65"))
    add("two-signers-unknown-then-mldsa65", "an unknown key's signer, then a valid ML-DSA-65 signer",
        two_signers("untrusted-rsa", "mldsa65"))
    add("s9.06-two-signers-attrs-then-none", "first signer with signedAttrs, second without (§9.6)",
        two_signers("mldsa65", "mldsa44", attrs_a=True))

    # signedAttrs edits on ML-DSA-65 (re-signed where the signature must stay valid).
    def attrs_edit(edit, resign=True, key="mldsa65"):
        def f():
            p = c.p7(key, attrs=True)
            edit(p)
            if resign:
                c.resign_attrs(p, key)
            return c.mod(p)
        return f

    def two_md(p):
        p.attrs().kids.append(p.attr(OID_MD))
    add("s9.09-two-messagedigest", "two messageDigest attributes (§9.9)", attrs_edit(two_md))

    def md_two_values(p):
        p.attr(OID_MD).kids[1].kids.append(md_node(p))
    add("s9.10-messagedigest-two-values", "messageDigest SET with two values (§9.10)", attrs_edit(md_two_values))

    def md_bitstring(p):
        n = md_node(p)
        p.attr(OID_MD).kids[1].kids[0] = Node(0x03, val=b"\0" + n.val)
    add("s9.11-messagedigest-bitstring", "messageDigest as BIT STRING (§9.11)", attrs_edit(md_bitstring))

    def no_ct(p):
        p.attrs().kids = [a for a in p.attrs().kids if a.kids[0].val != oid(OID_CT).val]
    add("s9.12-no-contenttype", "signedAttrs lacking contentType (§9.12)", attrs_edit(no_ct))

    def ct_indirect(p):
        p.attr(OID_CT).kids[1].kids[0] = oid(OID_MS_INDIRECT)
    add("s9.13-contenttype-msindirect", "contentType attribute msIndirectData (§9.13)", attrs_edit(ct_indirect))

    def smime(p):
        p.attrs().kids.append(Node(0x30, kids=[oid(OID_SMIMECAP), Node(0x31, kids=[Node(0x30, kids=[])])]))
    add("s9.14-smimecapabilities", "sMIMECapabilities attribute (§9.14)", attrs_edit(smime))

    def unknown_attr(p):
        p.attrs().kids.append(Node(0x30, kids=[oid("1.2.3.4"), Node(0x31, kids=[
            Node(0x04, val=b"a"), Node(0x04, val=b"b"), Node(0x04, val=b"c")])]))
    add("s9.15-unknown-attribute", "unknown attribute 1.2.3.4 with three values, re-signed (§9.15)",
        attrs_edit(unknown_attr))
    add("mldsa65-signedattrs-resigned", "ML-DSA-65 signedAttrs re-signed unchanged (harness check)",
        attrs_edit(lambda p: None))

    def md_short(p):
        md_node(p).val = md_node(p).val[:20]
    add("s9.17-messagedigest-20-bytes", "messageDigest of 20 bytes with SHA-512 (§9.17)", attrs_edit(md_short))

    def md_wrong(p):
        v = bytearray(md_node(p).val)
        v[0] ^= 0xff
        md_node(p).val = bytes(v)
    add("s9.18-messagedigest-wrong", "messageDigest of the right size, wrong value (§9.18)", attrs_edit(md_wrong))

    def signing_time(p):
        p.attrs().kids.append(Node(0x30, kids=[oid(OID_SIGNING_TIME), Node(0x31, kids=[
            Node(0x17, val=b"900101000000Z")])]))
        embed_certs(p, [c.cert_node("mldsa65")])
    add("s9.32-signingtime-outside-validity", "signingTime 1990 and the signer certificate embedded (§9.32)",
        attrs_edit(signing_time))

    def sha256_attrs(p):
        p.si().kids[2].kids[0] = oid(OID_SHA256)
        md_node(p).val = hashlib.sha256(c.content).digest()
    add("s9.33-mldsa-signedattrs-sha256", "ML-DSA-65 signedAttrs with SHA-256, re-signed (§9.33)",
        attrs_edit(sha256_attrs))

    authattr_cases(add, attrs_edit)

    def sig_short():
        p = c.p7("mldsa65")
        p.sig().val = p.sig().val[:-1]
        return c.mod(p)
    add("s9.35-mldsa-signature-short", "ML-DSA-65 signature one byte short (§9.35)", sig_short)

    cases += common_malformed(c, "mldsa65")
    add("rsa-s9.08-sigalg-sha256WithRSA", "RSA signatureAlgorithm sha256WithRSAEncryption (§9.8)",
        [f for n, d, f in common_malformed(c, "rsa") if n.startswith("s9.08")][0])
    add("rsa-s9.29-signature-flipped", "RSA signature with one bit flipped (§9.29)",
        [f for n, d, f in common_malformed(c, "rsa") if n.startswith("s9.29")][0])
    cases += remote_cases(c)
    cases += mutant_cases(c)
    cases += mldsa_kernel_ecdsa_cases(c)
    cases += gost_cert_cases(c)
    cases += producer_cases(c)
    return cases


OID_MS_STATEMENT_TYPE = "1.3.6.1.4.1.311.2.1.11"
OID_MS_OPUS_INFO = "1.3.6.1.4.1.311.2.1.12"
OID_MS_INDIVIDUAL_CODE_SIGNING = "1.3.6.1.4.1.311.2.1.21"


def authattr_cases(add, attrs_edit):
    """pkcs7_sig_note_authenticated_attr's and pkcs7_sig_note_set_of_authattrs' rules one at a
    time (issue 25: the lines the generator's first-element repeat did not reach): each
    attribute the parser keeps a bit for, repeated; messageDigest alone missing; and a message
    of content type msIndirectData (eContentType and the contentType attribute alike) with
    Authenticode's attributes, which parses and is then refused as a module signature
    (pkcs7_verify: not pkcs7-data). ML-DSA-65 signedAttrs, re-signed."""
    def attr(o, value):
        return Node(0x30, kids=[oid(o), Node(0x31, kids=[value])])

    signing_time = attr(OID_SIGNING_TIME, Node(0x17, val=b"260101000000Z"))
    smime = attr(OID_SMIMECAP, Node(0x30, kids=[]))
    opus = attr(OID_MS_OPUS_INFO, Node(0x30, kids=[]))
    statement = attr(OID_MS_STATEMENT_TYPE, Node(0x30, kids=[oid(OID_MS_INDIVIDUAL_CODE_SIGNING)]))

    def adding(*attrs, indirect=False):
        def edit(p):
            if indirect:
                p.sd.kids[2].kids[0] = oid(OID_MS_INDIRECT)
                p.attr(OID_CT).kids[1].kids[0] = oid(OID_MS_INDIRECT)
            p.attrs().kids.extend(Node(0x30, kids=list(a.kids)) for a in attrs)
        return attrs_edit(edit)

    add("authattrs-two-signingtime", "two signingTime attributes", adding(signing_time, signing_time))

    def no_md(p):
        p.attrs().kids = [a for a in p.attrs().kids if a.kids[0].val != oid(OID_MD).val]
    add("authattrs-no-messagedigest", "signedAttrs with contentType and without messageDigest", attrs_edit(no_md))
    add("authattrs-msopusinfo-in-data", "msSpOpusInfo in a pkcs7-data message", adding(opus))
    add("authattrs-indirect-data", "content type msIndirectData with signingTime, sMIMECapabilities, "
        "msSpOpusInfo and msStatementType", adding(signing_time, smime, opus, statement, indirect=True))
    for name, a in [("smimecapabilities", smime), ("msopusinfo", opus), ("msstatementtype", statement)]:
        add("authattrs-indirect-two-" + name, "content type msIndirectData, two %s attributes" % name,
            adding(a, a, indirect=True))
