"""Signed modules taken apart and put together, the builders' context (Ctx), and the
section 9 situations shared by every kernel family (common_malformed)."""
import os
import shutil
import subprocess

from .common import KEYS, MAGIC, run
from .der import (Node, OID_DATA, OID_ENVELOPED, OID_MD, OID_MD5, OID_SHA256_RSA, P7, integer, oid,
                  parse)


SOFTHSM = "/usr/lib/softhsm/libsofthsm2.so"  # Debian's softhsm2 (tools/check installs it)
# The token's keys (issue 15 §1): RSA-2048, -3072, -4096, ECDSA P-256, P-384.  Every built
# kernel trusts rsa and ecdsa; only the 7.2 nowaive build ("mldsa") trusts the other three.
TOKEN_KEYS = ["rsa2048", "rsa", "rsa4096", "ecdsa-p256", "ecdsa"]


# --- modules ------------------------------------------------------------------------------------
def split_module(data):
    """(content, pkcs7 DER, trailer fields) of a signed module; raises if it is not signed."""
    if not data.endswith(MAGIC):
        raise ValueError("module not signed")
    ms = data[-len(MAGIC) - 12:-len(MAGIC)]
    sig_len = int.from_bytes(ms[8:12], "big")
    end = len(data) - len(MAGIC) - 12
    return data[:end - sig_len], data[end - sig_len:end], ms


def assemble(content, p7, algo=0, hash_=0, id_type=2, sig_len=None, magic=MAGIC):
    """content ‖ PKCS#7 ‖ struct module_signature ‖ magic (include/linux/module_signature.h)."""
    n = len(p7) if sig_len is None else sig_len
    ms = bytes([algo, hash_, id_type, 0, 0, 0, 0, 0]) + n.to_bytes(4, "big")
    return content + p7 + ms + magic


class Ctx:
    """What the case builders need: the unsigned base module and the tools."""

    def __init__(self, modsign, openssl, base, workdir):
        self.modsign, self.openssl, self.base, self.work = modsign, openssl, base, workdir
        with open(base, "rb") as f:
            self.content = f.read()
        self.n = 0

    def tmp(self, suffix):
        self.n += 1
        d = os.path.join(self.work, "tmp")
        os.makedirs(d, exist_ok=True)
        return os.path.join(d, "%d%s" % (self.n, suffix))

    def key(self, name):
        return os.path.join(KEYS, name + ".key.pem")

    def cert(self, name):
        return os.path.join(KEYS, name + ".cert.pem")

    def sign(self, keyname, hash_="sha512", attrs=False, keyid=False, deterministic=False):
        """A module signed by modsign sign (bytes); deterministic: --deterministic (the same
        bytes on every run)."""
        out = self.tmp(".ko")
        cmd = [self.modsign, "sign", "--key", self.key(keyname), "--cert", self.cert(keyname),
               "--hash", hash_, "--dest", out, self.base]
        if attrs:
            cmd.append("--signed-attrs")
        if keyid:
            cmd.append("--keyid")
        if deterministic:
            cmd.append("--deterministic")
        run(cmd)
        with open(out, "rb") as f:
            return f.read()

    def token_env(self):
        """The environment of a modsign run on the SoftHSM2 token made in the workdir (once):
        every key of TOKEN_KEYS imported from its committed PEM file, labelled by its name, so
        that the built kernels' keyrings know their certificates; the keys then live on the
        token, reached by `pkcs11:token=conformance;object=<name>` with PIN 1234."""
        tok = os.path.join(self.work, "softhsm")
        conf = os.path.join(tok, "softhsm2.conf")
        os.environ["SOFTHSM2_CONF"] = conf
        os.environ["PKCS11_PROVIDER_MODULE"] = SOFTHSM
        if not os.path.exists(os.path.join(tok, "ready")):
            shutil.rmtree(tok, ignore_errors=True)
            os.makedirs(os.path.join(tok, "tokens"))
            with open(conf, "w") as f:
                f.write("directories.tokendir = %s/tokens\nobjectstore.backend = file\nlog.level = ERROR\n" % tok)
            run(["softhsm2-util", "--init-token", "--free", "--label", "conformance", "--pin", "1234",
                 "--so-pin", "5678"])
            for i, k in enumerate(TOKEN_KEYS):
                run(["softhsm2-util", "--import", self.key(k), "--token", "conformance", "--label", k,
                     "--id", "%02x" % (i + 1), "--pin", "1234"])
            open(os.path.join(tok, "ready"), "w").close()
        return dict(os.environ, KBUILD_SIGN_PIN="1234")

    def token_sign(self, keyname, via="sign"):
        """The base module signed with the token's key keyname through its pkcs11: URI, by
        `modsign sign` (via "sign"), by `modsign sign-file sha256 URI CERT MODULE` in place
        ("sign-file"), or in a batch ("batch": `modsign sign -j2 -r DIR` over a directory
        holding the base module twice; the first is returned, the second must be signed too)."""
        env = self.token_env()
        uri = "pkcs11:token=conformance;object=" + keyname
        if via == "sign":
            out = self.tmp(".ko")
            run([self.modsign, "sign", "--key", uri, "--cert", self.cert(keyname), "--dest", out, self.base],
                env=env, stdin=subprocess.DEVNULL)
        elif via == "sign-file":
            out = self.tmp(".ko")
            shutil.copyfile(self.base, out)
            run([self.modsign, "sign-file", "sha256", uri, self.cert(keyname), out], env=env,
                stdin=subprocess.DEVNULL)
        elif via == "batch":
            d = self.tmp(".d")
            os.makedirs(d)
            out, other = os.path.join(d, "a.ko"), os.path.join(d, "b.ko")
            for f in (out, other):
                shutil.copyfile(self.base, f)
            run([self.modsign, "sign", "--key", uri, "--cert", self.cert(keyname), "-j2", "-r", d], env=env,
                stdin=subprocess.DEVNULL)
            with open(other, "rb") as f:
                if not f.read().endswith(MAGIC):
                    raise RuntimeError("modsign sign -j2 -r %s left %s unsigned" % (d, other))
        else:
            raise ValueError(via)
        with open(out, "rb") as f:
            return f.read()

    def p7(self, keyname, **kw):
        return P7(split_module(self.sign(keyname, **kw))[1])

    def cert_node(self, name):
        der = run([self.openssl, "x509", "-in", self.cert(name), "-outform", "DER"])
        return parse(der)[0]

    def raw_sign(self, keyname, msg):
        """A pure ML-DSA signature (empty context) of msg with the test key keyname."""
        f = self.tmp(".msg")
        with open(f, "wb") as fh:
            fh.write(msg)
        return run([self.openssl, "pkeyutl", "-sign", "-rawin", "-inkey", self.key(keyname), "-in", f])

    def resign_attrs(self, p7, keyname, i=0):
        """Re-signs signer i's signedAttrs (as SET OF, tag 0x31) after an edit (ML-DSA only)."""
        a = p7.attrs(i)
        der = a.enc()
        p7.sig(i).val = self.raw_sign(keyname, b"\x31" + der[1:])

    def mod(self, p7, **kw):
        return assemble(self.content, p7.der() if isinstance(p7, P7) else p7, **kw)


def embed_certs(p7, nodes):
    """Adds certificates [0] IMPLICIT SET OF Certificate before the SignerInfos."""
    p7.sd.kids.insert(len(p7.sd.kids) - 1, Node(0xa0, kids=nodes))


def md_node(p7, i=0):
    return p7.attr(OID_MD, i).kids[1].kids[0]


# --- cases ------------------------------------------------------------------------------------
ALGS = ["rsa", "ecdsa", "mldsa44", "mldsa65", "mldsa87"]
OTHER_HASHES = ["sha256", "sha384", "sha224", "sha1", "sha3-256", "sha3-384", "sha3-512"]


def common_malformed(c, key):
    """Section 9 situations built on a module signed with test key `key` (no signedAttrs)."""
    cases = []

    def add(name, desc, fn):
        cases.append((name, desc, fn))

    def outer_data():
        p = c.p7(key)
        p.ci.kids[0] = oid(OID_DATA)
        return c.mod(p)
    add("s9.01-outer-id-data", "outer ContentInfo contentType id-data (§9.1)", outer_data)

    def sd_version(v):
        def f():
            p = c.p7(key)
            p.sd.kids[0] = integer(v)
            return c.mod(p)
        return f
    add("s9.02-sd-version-2", "SignedData version 2 (§9.2)", sd_version(2))
    add("s9.02-sd-version-4", "SignedData version 4 (§9.2)", sd_version(4))

    def sd1_si3():
        p = c.p7(key, keyid=True)
        p.sd.kids[0] = integer(1)
        return c.mod(p)
    add("s9.03-sd-v1-si-v3", "SignedData v1 with a SignerInfo v3 (SKID) (§9.3)", sd1_si3)

    def sd3_si1():
        p = c.p7(key)
        p.sd.kids[0] = integer(3)
        return c.mod(p)
    add("s9.03-sd-v3-si-v1", "SignedData v3 with a SignerInfo v1 (§9.3)", sd3_si1)

    def econtent_enveloped():
        p = c.p7(key)
        p.sd.kids[2].kids[0] = oid(OID_ENVELOPED)
        return c.mod(p)
    add("s9.04-econtent-enveloped", "eContentType envelopedData (§9.4)", econtent_enveloped)

    def empty_sinfos():
        p = c.p7(key)
        p.sinfos.kids = []
        return c.mod(p)
    add("s9.05-signerinfos-empty", "SignerInfos present but empty (§9.5)", empty_sinfos)

    def md5():
        p = c.p7(key)
        p.si().kids[2].kids[0] = oid(OID_MD5)
        return c.mod(p)
    add("s9.07-digest-md5", "SignerInfo digestAlgorithm md5 (§9.7)", md5)

    def attached():
        p = c.p7(key)
        p.sd.kids[2].kids.append(Node(0xa0, kids=[Node(0x04, val=c.content)]))
        return c.mod(p)
    add("s9.16-econtent-embedded", "eContent embedded in the message (§9.16)", attached)

    def bad_sig():
        p = c.p7(key)
        s = bytearray(p.sig().val)
        s[len(s) // 2] ^= 0x01
        p.sig().val = bytes(s)
        return c.mod(p)
    add("s9.29-signature-flipped", "one bit of the signature flipped, no certificates (§9.29)", bad_sig)

    def trailer(**kw):
        return lambda: assemble(c.content, split_module(c.sign(key))[1], **kw)
    add("s9.36-id-type-1", "module_signature id_type 1 (PGP) (§9.36)", trailer(id_type=1))
    add("s9.36-hash-byte-1", "module_signature hash byte 1 (§9.36)", trailer(hash_=1))

    def siglen_big():
        return assemble(c.content, split_module(c.sign(key))[1], sig_len=len(c.content) + 10**6)
    add("s9.36-sig-len-too-big", "sig_len larger than the module (§9.36)", siglen_big)

    def no_magic():
        m = bytearray(c.sign(key))
        m[-2] ^= 0x20
        return bytes(m)
    add("s9.37-magic-damaged", "signed, but one byte of the magic string changed (§9.37)", no_magic)

    add("s9.37-unsigned", "no signature at all (§9.37)", lambda: c.content)

    def junk_after():
        p = c.p7(key)
        return c.mod(p.der() + b"\0\0\0\0JUNK")
    add("der-junk-after-contentinfo", "bytes after the ContentInfo, inside sig_len", junk_after)

    def long3():
        p = c.p7(key)
        p.ci.lenform = "long3"
        return c.mod(p)
    add("der-length-3-octets", "outer length in 3 octets (0x83 ..)", long3)

    def indef():
        p = c.p7(key)
        p.ci.lenform = "indef"
        p.ci.kids[1].lenform = "indef"
        p.sd.lenform = "indef"
        return c.mod(p)
    add("ber-indefinite-lengths", "ContentInfo, [0] and SignedData in BER indefinite length", indef)

    def rsa_sigalg():
        p = c.p7(key)
        p.si().kids[-2 if p.si().kids[-1].tag == 0x04 else -3].kids[0] = oid(OID_SHA256_RSA)
        return c.mod(p)
    if key.endswith("rsa"):
        add("s9.08-sigalg-sha256WithRSA", "signatureAlgorithm sha256WithRSAEncryption (§9.8)", rsa_sigalg)
    return cases


def gost_cert_cases(c):
    """The test ECDSA certificate embedded (the module signed by its key) with its signature
    algorithm changed to GOST R 34.10-2012 with Streebog (x509_note_sig_algo: "ecrdsa";
    mutant 20261207:151): in tbsCertificate.signature only (the two identifiers then
    differ: EINVAL), or in both (the signature is checked only where the kernel has
    Streebog, x509_get_sig_params; a self-signed certificate's key is then not EC-RDSA)."""
    cases = []
    for bits, last in (("256", 2), ("512", 3)):
        for where in ("tbs", "both"):
            def f(last=last, where=where):
                cert = c.cert_node("ecdsa")
                tbs = cert.kids[0]
                tbs_alg = tbs.kids[2] if tbs.kids[0].tag == 0xa0 else tbs.kids[1]
                tbs_alg.kids = [oid("1.2.643.7.1.1.3.%d" % last)]
                if where == "both":
                    cert.kids[1].kids = [oid("1.2.643.7.1.1.3.%d" % last)]
                p = c.p7("ecdsa", deterministic=True)
                embed_certs(p, [cert])
                return c.mod(p)
            cases.append(("cert-sigalg-gost%s-%s" % (bits, where),
                          "test ECDSA certificate embedded, %s signature algorithm GOST R 34.10-2012 with "
                          "Streebog-%s" % ("tbsCertificate's" if where == "tbs" else "both its identifiers'", bits), f))
    return cases
