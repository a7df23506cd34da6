"""Cases for the Debian cloud kernels (Debian's own signature and test keys it does
not trust)."""
import hashlib
import lzma

from .common import run
from .der import Node, OID_DATA, OID_ENVELOPED, OID_MD5, OID_SHA256_RSA, P7, integer, oid, parse
from .cases_common import TOKEN_KEYS, assemble, embed_certs, gost_cert_cases, split_module
from .cases_ecdsa import cert_cases, signerinfo_cases
from .cases_producers import producer_cases


def debian_cases(c, original):
    """Cases for a Debian kernel: Debian's own signature, test keys it does not trust, and the
    malformed situations built on Debian's own signature (RSA on 6.1, ECDSA P-384 on 6.12 and 7.2),
    so that a parse that succeeds would load."""
    cases = []

    def add(name, desc, fn):
        cases.append((name, desc, fn))

    orig = open(original, "rb").read()
    content, p7der, _ = split_module(orig)
    dp = lambda: P7(p7der)  # noqa: E731

    add("debian-original", "the module as Debian signed it", lambda: orig)
    add("s9.37-unsigned", "signature stripped (§9.37)", lambda: content)
    for alg in ["rsa", "ecdsa", "mldsa65"]:
        add("unknown-%s" % alg, "signed with the test %s key, unknown to the kernel (§9.30)" % alg,
            lambda a=alg: c.sign(a))
    for k in TOKEN_KEYS:
        add("token-unknown-%s" % k, "signed through a SoftHSM2 token's pkcs11: URI (test %s key, unknown "
            "to the kernel)" % k, lambda a=k: c.token_sign(a))
    add("unknown-rsa-signedattrs", "test RSA key, signedAttrs (§9.24)", lambda: c.sign("rsa", attrs=True))
    add("unknown-mldsa65-signedattrs", "test ML-DSA-65 key, signedAttrs", lambda: c.sign("mldsa65", attrs=True))
    add("unknown-rsa-keyid", "test RSA key, SKID", lambda: c.sign("rsa", keyid=True))

    def debian_edit(edit):
        def f():
            p = dp()
            edit(p)
            return assemble(content, p.der())
        return f

    def outer(p):
        p.ci.kids[0] = oid(OID_DATA)
    add("s9.01-outer-id-data", "outer contentType id-data (§9.1)", debian_edit(outer))

    def v2(p):
        p.sd.kids[0] = integer(2)
    add("s9.02-sd-version-2", "SignedData version 2 (§9.2)", debian_edit(v2))

    def env(p):
        p.sd.kids[2].kids[0] = oid(OID_ENVELOPED)
    add("s9.04-econtent-enveloped", "eContentType envelopedData (§9.4)", debian_edit(env))

    def empty(p):
        p.sinfos.kids = []
    add("s9.05-signerinfos-empty", "SignerInfos empty (§9.5)", debian_edit(empty))

    def md5(p):
        p.si().kids[2].kids[0] = oid(OID_MD5)
    add("s9.07-digest-md5", "digestAlgorithm md5 (§9.7)", debian_edit(md5))

    # Streebog (GOST R 34.11-2012) and SM3: names pkcs7_sig_note_digest_algo knows; Debian's
    # kernels build Streebog as a module and no SM3 (mutant 20261203:1043).
    for dn, do in [("sha1", "1.3.14.3.2.26"), ("sha512", "2.16.840.1.101.3.4.2.3"),
                   ("sha3-256", "2.16.840.1.101.3.4.2.8"), ("streebog256", "1.2.643.7.1.1.2.2"),
                   ("streebog512", "1.2.643.7.1.1.2.3"), ("sm3", "1.2.156.10197.1.401")]:
        def swap(p, o=do):
            p.si().kids[2].kids[0] = oid(o)
        add("digest-swapped-%s" % dn, "Debian's signature with digestAlgorithm changed to %s" % dn,
            debian_edit(swap))

    def rsa_sigalg(p):
        [k for k in p.si().kids if k.tag == 0x30][-1].kids[0] = oid(OID_SHA256_RSA)
    add("s9.08-sigalg-sha256WithRSA", "signatureAlgorithm sha256WithRSAEncryption (§9.8)", debian_edit(rsa_sigalg))

    def sm2_sigalg(p):
        [k for k in p.si().kids if k.tag == 0x30][-1].kids[0] = oid("1.2.156.10197.1.501")
    add("sigalg-sm2-with-sm3", "Debian's signature with signatureAlgorithm SM2-with-SM3 (mutant 20261206:521)",
        debian_edit(sm2_sigalg))

    def sm2_with_cert():
        p = c.p7("rsa")
        [k for k in p.si().kids if k.tag == 0x30][-1].kids[0] = oid("1.2.156.10197.1.501")
        embed_certs(p, [c.cert_node("rsa")])
        return c.mod(p)
    add("unknown-rsa-embedded-cert-sigalg-sm2", "test RSA key, certificate embedded, signatureAlgorithm "
        "SM2-with-SM3", sm2_with_cert)

    def attached(p):
        p.sd.kids[2].kids.append(Node(0xa0, kids=[Node(0x04, val=content)]))
    add("s9.16-econtent-embedded", "eContent embedded (§9.16)", debian_edit(attached))

    def flip(p):
        s = bytearray(p.sig().val)
        s[len(s) // 2] ^= 1
        p.sig().val = bytes(s)
    add("s9.29-signature-flipped", "Debian's signature with one bit flipped (§9.29)", debian_edit(flip))

    def content_changed():
        m = bytearray(content)
        m[-1] ^= 0x01  # last byte of the ELF (section header table); the signature no longer matches
        return assemble(bytes(m), p7der)
    add("content-changed", "one byte of the module changed under Debian's signature", content_changed)
    add("s9.36-id-type-1", "module_signature id_type 1 (§9.36)", lambda: assemble(content, p7der, id_type=1))
    add("s9.36-hash-byte-1", "module_signature hash byte 1 (§9.36)", lambda: assemble(content, p7der, hash_=1))
    add("s9.36-sig-len-too-big", "sig_len larger than the module (§9.36)",
        lambda: assemble(content, p7der, sig_len=len(orig) + 10**6))
    add("s9.37-magic-damaged", "one byte of the magic changed (§9.37)",
        lambda: orig[:-2] + bytes([orig[-2] ^ 0x20]) + orig[-1:])
    add("der-junk-after-contentinfo", "junk after the ContentInfo, inside sig_len",
        lambda: assemble(content, p7der + b"\0\0\0\0JUNK"))

    def long3(p):
        p.ci.lenform = "long3"
    add("der-length-3-octets", "outer length in 3 octets", debian_edit(long3))

    def indef(p):
        p.ci.lenform = p.ci.kids[1].lenform = p.sd.lenform = "indef"
    add("ber-indefinite-lengths", "Debian's signature re-encoded with BER indefinite lengths", debian_edit(indef))

    def with_cert():
        p = c.p7("rsa")
        embed_certs(p, [c.cert_node("rsa")])
        return c.mod(p)
    add("unknown-rsa-embedded-cert", "test RSA key with its certificate embedded (not trusted)", with_cert)

    def digest_with_cert(key, dotted):
        # The signer's certificate embedded, so pkcs7_verify_one checks the signature with
        # it (its errno is passed on) after pkcs7_digest has hashed the module: 6.1's
        # crypto_alloc_akcipher(pkcs1pad(rsa,streebog512)) ENOENT, 6.12 and 7.2 EINVAL.
        def f():
            p = c.p7(key)
            p.si().kids[2].kids[0] = oid(dotted)
            embed_certs(p, [c.cert_node(key)])
            return c.mod(p)
        return f
    for hn, ho in [("streebog512", "1.2.643.7.1.1.2.3"), ("sm3", "1.2.156.10197.1.401")]:
        add("unknown-rsa-embedded-cert-%s" % hn, "test RSA key, certificate embedded, digestAlgorithm %s" % hn,
            digest_with_cert("rsa", ho))

    def ecdsa_md5():
        # A genuine ECDSA P-256 signature of md5(content) under digestAlgorithm md5, with the
        # signer's certificate embedded so that pkcs7_verify() checks it.  The certificate is
        # issued by the test RSA key (not self-signed), so parsing it needs no ECDSA code:
        # software_key_determine_akcipher() meets the md5/ECDSA pair first (6.1: md5 parses).
        key, csr, crt = c.tmp(".key"), c.tmp(".csr"), c.tmp(".crt")
        run([c.openssl, "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-keyout", key, "-out", csr, "-subj", "/CN=modsign test ECDSA md5 signer"])
        run([c.openssl, "x509", "-req", "-in", csr, "-CA", c.cert("rsa"), "-CAkey", c.key("rsa"), "-days", "3650",
             "-set_serial", "4242", "-sha256", "-out", crt])
        out = c.tmp(".ko")
        run([c.modsign, "sign", "--key", key, "--cert", crt, "--hash", "sha256", "--dest", out, c.base])
        with open(out, "rb") as f:
            p = P7(split_module(f.read())[1])
        p.si().kids[2].kids[0] = oid(OID_MD5)
        f = c.tmp(".dgst")
        with open(f, "wb") as fh:
            fh.write(hashlib.md5(c.content).digest())
        p.sig().val = run([c.openssl, "pkeyutl", "-sign", "-inkey", key, "-in", f])
        embed_certs(p, [parse(run([c.openssl, "x509", "-in", crt, "-outform", "DER"]))[0]])
        return c.mod(p)
    add("unknown-ecdsa-md5-embedded-cert", "ECDSA P-256 key (certificate issued by the test RSA key, embedded), "
        "digestAlgorithm md5, genuine signature", ecdsa_md5)

    def sha3_cert(sigkind):
        # The test RSA signature with one bit flipped, its certificate embedded, plus a
        # certificate signed with a SHA-3 signature algorithm (issued by another key, so not
        # self-signed: parsing it verifies nothing).  Where X.509 knows the SHA-3 OIDs the
        # message parses and the flipped signature is refused (EKEYREJECTED); where it does
        # not (6.1), x509_cert_parse() fails with ENOPKG and the module is unsupported crypto.
        ca_key, key, csr, crt = c.tmp(".key"), c.tmp(".key"), c.tmp(".csr"), c.tmp(".crt")
        newkey = ["rsa:2048"] if sigkind == "rsa" else ["ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"]
        run([c.openssl, "genpkey", "-algorithm", "RSA" if sigkind == "rsa" else "EC"] +
            ([] if sigkind == "rsa" else ["-pkeyopt", "ec_paramgen_curve:prime256v1"]) + ["-out", ca_key])
        run([c.openssl, "req", "-new", "-newkey"] + newkey + ["-nodes", "-keyout", key, "-out", csr,
             "-subj", "/CN=modsign test SHA-3 signed certificate"])
        ca_crt = c.tmp(".crt")
        run([c.openssl, "req", "-x509", "-new", "-key", ca_key, "-subj", "/CN=modsign test SHA-3 CA", "-days", "3650",
             "-sha256", "-out", ca_crt])
        run([c.openssl, "x509", "-req", "-in", csr, "-CA", ca_crt, "-CAkey", ca_key, "-days", "3650",
             "-set_serial", "4243", "-sha3-256", "-out", crt])
        p = c.p7("rsa", hash_="sha256")
        s_ = bytearray(p.sig().val)
        s_[len(s_) // 2] ^= 1
        p.sig().val = bytes(s_)
        embed_certs(p, [c.cert_node("rsa"), parse(run([c.openssl, "x509", "-in", crt, "-outform", "DER"]))[0]])
        return c.mod(p)
    add("sha3-rsa-cert-embedded", "test RSA signature flipped, its certificate and a sha3-256WithRSAEncryption "
        "certificate embedded", lambda: sha3_cert("rsa"))
    add("sha3-ecdsa-cert-embedded", "test RSA signature flipped, its certificate and an id-ecdsa-with-sha3-256 "
        "certificate embedded", lambda: sha3_cert("ecdsa"))
    # Compressed, loaded with finit_module(MODULE_INIT_COMPRESSED_FILE): Debian 13's kernel
    # has CONFIG_MODULE_DECOMPRESS with xz (the only format its module_decompress knows).
    # module_decompress stops at the end of the xz stream and never reads what follows;
    # module_sig_check then checks the decompressed image only.
    def xz(data):
        return lzma.compress(data, format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC32,
                             filters=[{"id": lzma.FILTER_LZMA2, "preset": 6, "dict_size": 1 << 20}])
    add("xz-debian-original.ko.xz", "Debian's signed module, xz-compressed", lambda: xz(orig))
    add("xz-junk-after-stream.ko.xz", "Debian's signed module, xz, 5 bytes of junk after the stream",
        lambda: xz(orig) + b"JUNK!")
    add("xz-second-stream.ko.xz", "Debian's signed module, xz, then a second xz stream (the unsigned module)",
        lambda: xz(orig) + xz(content))
    add("xz-signature-after-stream.ko.xz", "the unsigned module, xz, then Debian's signature appended to the "
        "compressed file", lambda: xz(content) + orig[len(content):])
    add("xz-unsigned-junk-after-stream.ko.xz", "the unsigned module, xz, then 4096 bytes of zeros and junk",
        lambda: xz(content) + b"\0" * 4095 + b"J")
    # modsign sign-file on a .ko.xz signs the decompressed image and compresses it again
    # (issue 15 §4), where scripts/sign-file appends the signature after the xz stream (the
    # case xz-signature-after-stream above: the kernel never reads it).
    def sign_file(data, *opts):
        f = c.tmp(".ko.xz")
        with open(f, "wb") as fh:
            fh.write(data)
        run([c.modsign, "sign-file"] + list(opts) + ["sha256", c.key("rsa"), c.cert("rsa"), f])
        with open(f, "rb") as fh:
            return fh.read()

    add("xz-sign-file.ko.xz", "unsigned module xz-compressed, then modsign sign-file (test RSA key, unknown): "
        "the decompressed image signed, recompressed", lambda: sign_file(xz(content)))
    add("xz-sign-file-stacked.ko.xz", "Debian's .ko.xz re-signed by modsign sign-file (test RSA key over "
        "Debian's signature, stacked)", lambda: sign_file(xz(orig)))
    # The ECDSA-Sig-Value family (cases_ecdsa.py): in Debian's own signature where it is
    # ECDSA (the trusted key: every failure is EKEYREJECTED), and in the test ECDSA
    # certificate's self-signature, which x509_cert_parse checks on every kernel.
    ec_prefix = bytes([0x2a, 0x86, 0x48, 0xce, 0x3d])  # 1.2.840.10045 (ANSI X9.62)
    if any(k.tag == 0x30 and k.kids and k.kids[0].tag == 0x06 and k.kids[0].val.startswith(ec_prefix)
           for k in dp().si().kids):
        cases += signerinfo_cases(lambda: (dp(), lambda p: assemble(content, p.der())), "debian-ecdsa-sig",
                                  "Debian's signature")
    cases += cert_cases(c, "ecdsa-cert-sig")
    cases += gost_cert_cases(c)
    cases += producer_cases(c)
    return cases
