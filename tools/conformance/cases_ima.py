"""Cases for the IMA kernel (mldsa-ima): the IMA policy, d-modsig situations and
hostile trailers."""
import hashlib

from .common import MAGIC, run
from .der import Node, OID_MD, OID_SHA256, P7, oid, parse
from .cases_common import assemble, common_malformed, embed_certs, md_node, split_module
from .cases_producers import producer_cases


IMA_CERT = "mldsa65"   # the one certificate on the .ima keyring (CONFIG_IMA_X509_PATH)
IMA_POLICY = "measure func=MODULE_CHECK\nappraise func=MODULE_CHECK appraise_type=imasig|modsig\n"
# Written to the policy file after IMA_POLICY is active, one open/write/close per line
# (CONFIG_IMA_WRITE_POLICY): a rule that measures POLICY_CHECK, then a rule of 275 bytes (the
# blanks between its words are skipped by ima_parse_rule).  Linux 7.3 measures the raw text of
# every policy write (ima_measure_raw_policy, ima_main.c) as an ima-buf "ima_policy_written"
# record when the active policy measures POLICY_CHECK: IMA_POLICY's writes (boot policy empty)
# and the first line give none, the second line one.  7.2.13 gives none.  Both kernels take a
# rule over 255 bytes.  Checked by ima_policy_row (predict.py).
IMA_POLICY_PROBE = ("measure func=POLICY_CHECK\n", "measure" + " " * 250 + "func=POLICY_CHECK\n")


def ima_cases(c):
    """Cases for the IMA kernel (7.2.13, waiver off, IMA_POLICY, ima_template=ima-modsig).

    The .ima keyring holds only the ML-DSA-65 test certificate, so IMA's own modsig check
    (ima_modsig_verify against .ima) and the module loader's check (against the built-in
    keyring) can disagree.  The blacklist holds bin: SHA-256 of the unsigned test module, which
    is pkcs7_get_digest() of a SHA-256 signature without signedAttrs."""
    cases = []

    def add(name, desc, fn):
        cases.append((name, desc, fn))

    add("mldsa65-default", "ML-DSA-65 (.ima key), no signedAttrs, SHA-512: the d-modsig gap",
        lambda: c.sign("mldsa65"))
    add("mldsa65-keyid", "ML-DSA-65 (.ima key), no signedAttrs, SKID", lambda: c.sign("mldsa65", keyid=True))
    add("mldsa65-sha256-listed", "ML-DSA-65, no signedAttrs, SHA-256: content's bin: is listed but not looked up",
        lambda: c.sign("mldsa65", hash_="sha256"))
    add("mldsa65-signedattrs", "ML-DSA-65, signedAttrs (waiver off): IMA's modsig check fails too",
        lambda: c.sign("mldsa65", attrs=True))
    add("mldsa44-default", "ML-DSA-44: built-in key, not on .ima", lambda: c.sign("mldsa44"))
    add("mldsa87-signedattrs", "ML-DSA-87, signedAttrs: built-in key, not on .ima", lambda: c.sign("mldsa87", attrs=True))
    add("rsa-sha512", "RSA, SHA-512: built-in key, not on .ima; d-modsig recorded", lambda: c.sign("rsa"))
    add("rsa-sha256-blacklisted", "RSA, SHA-256: d-modsig = bin: entry of the blacklist",
        lambda: c.sign("rsa", hash_="sha256"))
    add("rsa-signedattrs-sha256", "RSA, signedAttrs, SHA-256: d-modsig is the signedAttrs digest",
        lambda: c.sign("rsa", attrs=True, hash_="sha256"))
    add("ecdsa-sha384", "ECDSA P-384, SHA-384: not on .ima", lambda: c.sign("ecdsa", hash_="sha384"))
    add("unknown-mldsa65", "ML-DSA-65 key on no keyring", lambda: c.sign("untrusted-mldsa65"))
    add("unsigned", "no signature: the file hash is looked up (it is listed)", lambda: c.content)
    add("unsigned-other", "no signature, content not listed", lambda: c.content + b"\0" * 16)

    def two_signers():
        pa, pb = c.p7("mldsa65"), c.p7("rsa")
        pa.sinfos.kids.append(pb.si())
        return c.mod(pa)
    def foreign_content():
        other = b"content that is not this module\n"
        src, out = c.tmp(".bin"), c.tmp(".ko")
        with open(src, "wb") as f:
            f.write(other)
        run([c.modsign, "sign", "--key", c.key("mldsa65"), "--cert", c.cert("mldsa65"), "--dest", out, src])
        with open(out, "rb") as f:
            p = P7(split_module(f.read())[1])
        p.sd.kids[2].kids.append(Node(0xa0, kids=[Node(0x04, val=other)]))
        return c.mod(p)
    add("econtent-foreign", "ML-DSA-65 signature over other bytes, embedded as eContent: IMA verifies those bytes",
        foreign_content)
    add("two-signers-mldsa65-rsa", "two signers, ML-DSA-65 (.ima) and RSA: pkcs7_get_digest refuses two", two_signers)
    # The malformed set on ML-DSA-65: where ima_read_modsig() fails IMA has no modsig (empty
    # d-modsig and modsig fields); where it parses, the record carries the blob.
    cases += [x for x in common_malformed(c, "mldsa65") if x[0] != "s9.37-unsigned"]
    # fs/kernel_read_file.c: i_size <= 0 is EINVAL, before IMA and module_sig_check (issue 25
    # §3).  Only here, where /init loads with finit_module(2) alone (tests/kernel/finit.c):
    # busybox insmod, the other kernels' loader, refuses an empty file itself ("short read")
    # before it makes any system call.
    cases.append(("load-empty-file", "an empty module file: kernel_read_file refuses it (EINVAL) before IMA and "
                  "the signature check", lambda: b""))
    cases += ima_more_cases(c)
    cases += producer_cases(c)
    # Last, as it leaves the x86_64 kernel tainted (D): signedAttrs one byte longer than the
    # d-modsig buffer of ima_eventdigest_init_common() holds.  The kernel writes past its stack
    # buffer: the x86_64 build oopses, the s390x build records the field whole.
    cases.append(("mldsa65-signedattrs-194-overflow",
                  "ML-DSA-65, signedAttrs padded to 194 bytes: d-modsig writes 1 byte past the kernel's 201-byte "
                  "stack buffer", padded_attrs(c, 194)))
    return cases


def padded_attrs(c, n):
    """The builder of an ML-DSA-65 module whose signedAttrs' DER is `n` bytes (pad_attrs): its
    d-modsig field is n + 8 bytes ("sha256:" NUL and the re-tagged signedAttrs)."""
    def build():
        p = c.p7("mldsa65", attrs=True)
        pad_attrs(p, n)
        return c.mod(p)
    return build


# The signedAttrs sizes at the d-modsig overflow's measured edge per machine (the field is 8
# bytes longer): the longest the kernel survives, and one byte more.
OVERFLOW_EDGE = {"s390x": 257, "arm64": 201}


def overflow_cases(c, machine):
    """After ima_cases(), on the kernels of `machine` alone: the d-modsig stack overflow's
    measured edge there (digest/ima_template_lib.hpp ima_digest_field_survivable).  s390x:
    a 265-byte field (257 bytes of signedAttrs) is recorded whole, 266 bytes reach the saved
    return address and kill the task; arm64: 209 and 210 bytes.  Last, as the second leaves
    the kernel tainted."""
    if machine not in OVERFLOW_EDGE:
        return []
    n = OVERFLOW_EDGE[machine]
    return [("mldsa65-signedattrs-%d-%s" % (m, what),
             "ML-DSA-65, signedAttrs padded to %d bytes: d-modsig writes %d bytes past the 201-byte stack buffer%s (%s)"
             % (m, m + 8 - 201, note, machine),
             padded_attrs(c, m))
            for m, what, note in ((n, "survives", ", short of the saved return address"),
                                  (n + 1, "killed", ", its last over the saved return address"))]


OID_DIGESTS = {"sha1": "1.3.14.3.2.26", "sha256": OID_SHA256, "sha384": "2.16.840.1.101.3.4.2.2",
               "sha512": "2.16.840.1.101.3.4.2.3", "sha224": "2.16.840.1.101.3.4.2.4",
               "sha3-256": "2.16.840.1.101.3.4.2.8", "sha3-384": "2.16.840.1.101.3.4.2.9",
               "sha3-512": "2.16.840.1.101.3.4.2.10", "sm3": "1.2.156.10197.1.401",
               "streebog256": "1.2.643.7.1.1.2.2"}


def pad_attrs(p7, total):
    """Adds an attribute 1.2.3.4 holding one OCTET STRING to signer 0's signedAttrs so that
    their DER ([0] tag and length included, = the kernel's authattrs_len) is `total` bytes."""
    base = len(p7.attrs().enc())
    for n in range(0, total):
        a = Node(0x30, kids=[oid("1.2.3.4"), Node(0x31, kids=[Node(0x04, val=b"\x5a" * n)])])
        p7.attrs().kids.append(a)
        if len(p7.attrs().enc()) == total:
            return
        p7.attrs().kids.pop()
    raise ValueError("cannot pad signedAttrs of %d bytes to %d" % (base, total))


def trailer_bytes(sig_len, algo=0, hash_=0, id_type=2, signer_len=0, key_id_len=0, pad=b"\0\0\0"):
    """struct module_signature (include/linux/module_signature.h), every field settable."""
    return bytes([algo, hash_, id_type, signer_len, key_id_len]) + pad + sig_len.to_bytes(4, "big")


def ima_more_cases(c):
    """More IMA cases: every digest modsign offers (the d-modsig algorithm name), signers the
    .ima keyring does or does not trust, certificates embedded or chained to the .ima key,
    signedAttrs edits, trailer edits, and files too short for a modsig."""
    cases = []

    def add(name, desc, fn):
        cases.append((name, desc, fn))

    def ed(key, edit, **kw):
        def f():
            p = c.p7(key, **kw)
            edit(p)
            return c.mod(p)
        return f

    # Digests: RSA records "<algo>:" + H(content) in d-modsig; ML-DSA without signedAttrs has no
    # digest at all (pkcs7_get_digest: EINVAL), so no record, whatever the digestAlgorithm.
    for h in ["sha1", "sha224", "sha384", "sha3-256", "sha3-384", "sha3-512"]:
        add("rsa-%s" % h, "RSA, %s: built-in key, not on .ima; d-modsig %s:" % (h, h),
            lambda hh=h: c.sign("rsa", hash_=hh))
    add("ecdsa-sha256-listed-again", "ECDSA P-384, SHA-256: the same listed d-modsig as rsa-sha256-blacklisted",
        lambda: c.sign("ecdsa", hash_="sha256"))
    add("ecdsa-sha3-512", "ECDSA P-384, SHA3-512: not on .ima", lambda: c.sign("ecdsa", hash_="sha3-512"))
    for h in ["sha1", "sha224", "sha384", "sha3-256", "sha3-384", "sha3-512"]:
        add("mldsa65-%s" % h, "ML-DSA-65 (.ima key), no signedAttrs, digestAlgorithm %s" % h,
            lambda hh=h: c.sign("mldsa65", hash_=hh))

    def digest_oid(name):
        def edit(p):
            p.si().kids[2].kids[0] = oid(OID_DIGESTS[name])
        return edit
    add("mldsa65-digest-sm3", "ML-DSA-65, digestAlgorithm sm3 (not built): unused without signedAttrs",
        ed("mldsa65", digest_oid("sm3")))
    add("mldsa65-digest-streebog256", "ML-DSA-65, digestAlgorithm streebog256 (not built)",
        ed("mldsa65", digest_oid("streebog256")))
    add("rsa-digest-sm3", "RSA, digestAlgorithm sm3 (not built): ENOPKG, no digest", ed("rsa", digest_oid("sm3")))

    # ML-DSA signedAttrs with other digests: d-modsig is "<algo>:" + the re-tagged signedAttrs.
    def attrs_digest(name):
        def edit(p):
            p.si().kids[2].kids[0] = oid(OID_DIGESTS[name])
            md_node(p).val = hashlib.new(name.replace("-", "_"), c.content).digest()
            c.resign_attrs(p, "mldsa65")
        return edit
    for h in ["sha256", "sha1", "sha3-256"]:
        add("mldsa65-signedattrs-%s" % h, "ML-DSA-65, signedAttrs with %s (re-signed): d-modsig %s: + signedAttrs" % (h, h),
            ed("mldsa65", attrs_digest(h), attrs=True))

    add("mldsa65-signedattrs-md-wrong", "ML-DSA-65, signedAttrs, messageDigest wrong: pkcs7_get_digest fails",
        ed("mldsa65", lambda p: setattr(md_node(p), "val", bytes([md_node(p).val[0] ^ 0xff]) + md_node(p).val[1:]),
           attrs=True))
    add("mldsa65-signedattrs-no-md", "ML-DSA-65, signedAttrs without messageDigest",
        ed("mldsa65", lambda p: setattr(p.attrs(), "kids", [a for a in p.attrs().kids if a.kids[0].val != oid(OID_MD).val]),
           attrs=True))
    add("rsa-signedattrs-md-20-bytes", "RSA SHA-512, signedAttrs, messageDigest of 20 bytes: EBADMSG in pkcs7_digest",
        ed("rsa", lambda p: setattr(md_node(p), "val", md_node(p).val[:20]), attrs=True))
    add("mldsa65-signedattrs-193", "ML-DSA-65, signedAttrs padded to 193 bytes: d-modsig fills the kernel's 201-byte buffer",
        ed("mldsa65", lambda p: pad_attrs(p, 193), attrs=True))

    add("rsa-signedattrs-sha3-256", "RSA, signedAttrs, SHA3-256: d-modsig sha3-256: of the signedAttrs",
        lambda: c.sign("rsa", attrs=True, hash_="sha3-256"))
    add("ecdsa-signedattrs-sha384", "ECDSA P-384, signedAttrs, SHA-384", lambda: c.sign("ecdsa", attrs=True, hash_="sha384"))
    add("mldsa44-signedattrs", "ML-DSA-44, signedAttrs: d-modsig sha512: + signedAttrs", lambda: c.sign("mldsa44", attrs=True))

    def inconsistent():
        pa, pb = c.p7("mldsa65"), c.p7("rsa", attrs=True)
        pa.sinfos.kids.append(pb.si())
        return c.mod(pa)
    add("two-signers-attrs-inconsistent", "ML-DSA-65 without, RSA with signedAttrs: the parser refuses (EINVAL)",
        inconsistent)

    def md_wrong(p):
        v = bytearray(md_node(p).val)
        v[0] ^= 0xff
        md_node(p).val = bytes(v)
    add("rsa-signedattrs-md-wrong", "RSA, signedAttrs, messageDigest wrong: pkcs7_get_digest fails",
        ed("rsa", md_wrong, attrs=True))

    # Signers and certificates.
    add("blacklisted-rsa", "signed by the built-in certificate whose tbs: is blacklisted",
        lambda: c.sign("blacklisted-rsa"))
    add("blacklisted-rsa-embedded", "blacklisted certificate embedded, it signed",
        ed("blacklisted-rsa", lambda p: embed_certs(p, [c.cert_node("blacklisted-rsa")])))
    add("mldsa65-with-blacklisted-cert", "ML-DSA-65 (.ima) signer, unrelated blacklisted certificate embedded",
        ed("mldsa65", lambda p: embed_certs(p, [c.cert_node("blacklisted-rsa")])))
    add("mldsa65-embedded-cert", "ML-DSA-65 (.ima), its certificate embedded",
        ed("mldsa65", lambda p: embed_certs(p, [c.cert_node("mldsa65")])))
    add("mldsa65-keyid-embedded-cert", "ML-DSA-65 (.ima), SKID, its certificate embedded",
        ed("mldsa65", lambda p: embed_certs(p, [c.cert_node("mldsa65")]), keyid=True))
    add("unknown-mldsa65-embedded-cert", "untrusted ML-DSA-65 key, its certificate embedded",
        ed("untrusted-mldsa65", lambda p: embed_certs(p, [c.cert_node("untrusted-mldsa65")])))

    def chained(leaf_alg):
        def f():
            key, csr, crt = c.tmp(".key"), c.tmp(".csr"), c.tmp(".crt")
            if leaf_alg == "rsa":
                run([c.openssl, "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", key])
            else:
                run([c.openssl, "genpkey", "-algorithm", leaf_alg, "-out", key])
            run([c.openssl, "req", "-new", "-key", key, "-subj", "/O=modsign conformance/CN=leaf of ML-DSA-65",
                 "-out", csr])
            ext = c.tmp(".cnf")
            with open(ext, "w") as fh:
                fh.write("basicConstraints=critical,CA:FALSE\nkeyUsage=digitalSignature\n"
                         "subjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid\n")
            run([c.openssl, "x509", "-req", "-in", csr, "-CA", c.cert("mldsa65"), "-CAkey", c.key("mldsa65"),
                 "-set_serial", "4242", "-days", "3650", "-extfile", ext, "-out", crt])
            out = c.tmp(".ko")
            run([c.modsign, "sign", "--key", key, "--cert", crt, "--dest", out, c.base])
            with open(out, "rb") as fh:
                p = P7(split_module(fh.read())[1])
            embed_certs(p, [parse(run([c.openssl, "x509", "-in", crt, "-outform", "DER"]))[0]])
            return c.mod(p)
        return f
    add("chain-rsa-leaf-of-mldsa65", "fresh RSA leaf certificate issued by the .ima ML-DSA-65 key, embedded",
        chained("rsa"))
    add("chain-mldsa44-leaf-of-mldsa65", "fresh ML-DSA-44 leaf certificate issued by the .ima key, embedded",
        chained("ML-DSA-44"))

    def new_cert(alg, ca_cert, ca_key, cn, ca=False, dates=None):
        """(key file, certificate file): a fresh key and a certificate for it issued by ca_*."""
        key, csr, crt, ext = c.tmp(".key"), c.tmp(".csr"), c.tmp(".crt"), c.tmp(".cnf")
        if alg == "rsa":
            run([c.openssl, "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", key])
        else:
            run([c.openssl, "genpkey", "-algorithm", alg, "-out", key])
        run([c.openssl, "req", "-new", "-key", key, "-subj", "/O=modsign conformance/CN=" + cn, "-out", csr])
        with open(ext, "w") as fh:
            fh.write("basicConstraints=critical,CA:%s\nsubjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid\n"
                     % ("TRUE" if ca else "FALSE"))
        when = ["-not_before", dates[0], "-not_after", dates[1]] if dates else ["-days", "3650"]
        run([c.openssl, "x509", "-req", "-in", csr, "-CA", ca_cert, "-CAkey", ca_key, "-set_serial", "77",
             "-extfile", ext, "-out", crt] + when)
        return key, crt

    def signed_by(key, crt, embed):
        out = c.tmp(".ko")
        run([c.modsign, "sign", "--key", key, "--cert", crt, "--dest", out, c.base])
        with open(out, "rb") as fh:
            p = P7(split_module(fh.read())[1])
        if embed:
            embed_certs(p, [parse(run([c.openssl, "x509", "-in", f, "-outform", "DER"]))[0] for f in embed])
        return c.mod(p)

    def chain2(embed_mid=True):
        def f():
            mk, mc = new_cert("ML-DSA-44", c.cert("mldsa65"), c.key("mldsa65"), "intermediate of ML-DSA-65", ca=True)
            lk, lc = new_cert("rsa", mc, mk, "leaf of the intermediate")
            return signed_by(lk, lc, [lc, mc] if embed_mid else [lc])
        return f
    add("chain-two-levels", "RSA leaf <- ML-DSA-44 intermediate <- .ima ML-DSA-65 key, both embedded", chain2())
    add("chain-two-levels-no-intermediate", "the same, the intermediate certificate left out: ENOKEY", chain2(False))
    add("chain-rsa-leaf-expired", "RSA leaf of the .ima key, valid 2000-2001 only (no clock check)",
        lambda: (lambda kc: signed_by(kc[0], kc[1], [kc[1]]))(
            new_cert("rsa", c.cert("mldsa65"), c.key("mldsa65"), "expired leaf", dates=("20000101000000Z", "20010101000000Z"))))
    add("chain-rsa-leaf-of-builtin-rsa", "RSA leaf issued by the built-in RSA key (not on .ima), embedded",
        lambda: (lambda kc: signed_by(kc[0], kc[1], [kc[1]]))(
            new_cert("rsa", c.cert("rsa"), c.key("rsa"), "leaf of the RSA key")))
    add("embedded-cert-garbage", "ML-DSA-65 (.ima), a certificate that does not parse embedded",
        ed("mldsa65", lambda p: embed_certs(p, [Node(0x30, kids=[Node(0x02, val=b"\x01")])])))

    def double(inner_key, outer_key):
        """A signed module signed again: the outer ML-DSA signature (pure, no signedAttrs) is
        made over the whole inner signed module with openssl (modsign refuses signed input)."""
        def f():
            inner = c.sign(inner_key)
            p = c.p7(outer_key)
            p.sig().val = c.raw_sign(outer_key, inner)
            return assemble(inner, p.der())
        return f
    add("double-signed-rsa-in-mldsa65-out", "RSA-signed module signed again by ML-DSA-65 (.ima): IMA reads the outer one",
        double("rsa", "mldsa65"))
    add("double-signed-mldsa65-in-mldsa44-out", "ML-DSA-65-signed module signed again by ML-DSA-44 (not on .ima)",
        double("mldsa65", "mldsa44"))
    add("rsa-der-junk-after-contentinfo", "RSA, bytes after the ContentInfo inside sig_len: recorded in modsig",
        lambda: c.mod(c.p7("rsa").der() + b"\0\0\0\0JUNK"))

    def rsa_indef():
        p = c.p7("rsa")
        p.ci.lenform = p.ci.kids[1].lenform = p.sd.lenform = "indef"
        return c.mod(p)
    add("rsa-ber-indefinite-lengths", "RSA, BER indefinite lengths: modsig is the bytes as stored", rsa_indef)

    def signers(keys, flip=None):
        def f():
            ps = [c.p7(k) for k in keys]
            for q in ps[1:]:
                ps[0].sinfos.kids.append(q.si())
            if flip is not None:
                s = bytearray(ps[0].sig(flip).val)
                s[len(s) // 2] ^= 1
                ps[0].sig(flip).val = bytes(s)
            return c.mod(ps[0])
        return f
    add("two-signers-rsa-mldsa65", "two signers, RSA then ML-DSA-65 (.ima)", signers(["rsa", "mldsa65"]))
    add("two-signers-unknown-mldsa65", "untrusted ML-DSA-65 then ML-DSA-65 (.ima)",
        signers(["untrusted-mldsa65", "mldsa65"]))
    add("two-signers-mldsa65-twice-second-bad", "ML-DSA-65 twice, the second signature flipped",
        signers(["mldsa65", "mldsa65"], flip=1))
    add("two-signers-mldsa44-mldsa65-bad", "ML-DSA-44, then ML-DSA-65 (.ima) flipped",
        signers(["mldsa44", "mldsa65"], flip=1))

    # Trailer edits.
    def tr(**kw):
        def f():
            p7 = split_module(c.sign("mldsa65"))[1]
            n = kw.pop("sig_len", len(p7))
            return c.content + p7 + trailer_bytes(n, **kw) + MAGIC
        return f
    add("trailer-sig-len-0", "sig_len 0: an empty PKCS#7 (EBADMSG), no modsig", tr(sig_len=0))
    add("trailer-pad-nonzero", "module_signature __pad[2] = 1", tr(pad=b"\0\0\1"))
    add("trailer-algo-1", "module_signature algo = 1", tr(algo=1))
    add("trailer-signer-len-1", "module_signature signer_len = 1", tr(signer_len=1))
    add("trailer-key-id-len-1", "module_signature key_id_len = 1", tr(key_id_len=1))

    def p7_shift(delta):
        def f():
            p7 = split_module(c.sign("mldsa65"))[1]
            return c.content + p7 + trailer_bytes(len(p7) + delta) + MAGIC
        return f
    add("trailer-sig-len-plus-1", "sig_len one more than the PKCS#7 (a content byte in front)", p7_shift(1))
    add("trailer-sig-len-minus-1", "sig_len one less than the PKCS#7 (truncated DER)", p7_shift(-1))

    # n-ng: IMA turns spaces into '_' (ima_write_template_field_data), nothing else.
    add("rsa name with spaces", "RSA: a file name with spaces, recorded with '_'", lambda: c.sign("rsa"))
    add("rsa-tab\there", "RSA: a file name with a tab, recorded as it is", lambda: c.sign("rsa"))
    add("rsa-n\u00e4me", "RSA: a UTF-8 file name", lambda: c.sign("rsa"))

    add("marker-twice", "ML-DSA-65 module with the marker appended once more",
        lambda: c.sign("mldsa65") + MAGIC)

    # Files too short for a modsig (ima_read_modsig: buf_len <= 40 is ENOENT).
    add("file-41-bytes", "1 byte, module_signature (sig_len 0), marker: 41 bytes",
        lambda: b"\x7f" + trailer_bytes(0) + MAGIC)
    add("file-40-bytes", "module_signature (sig_len 0) and marker only: 40 bytes", lambda: trailer_bytes(0) + MAGIC)
    add("file-29-bytes", "1 byte and the marker", lambda: b"\x7f" + MAGIC)
    add("file-marker-only", "the marker alone (28 bytes)", lambda: MAGIC)
    add("file-1-byte", "one byte, no marker", lambda: b"\x7f")
    return cases
