"""Module signatures made by other producers (issue 25 §2), loaded on every kernel that runs
the fixed cases: what distributions receive besides modsign's own output.

- the kernel's own scripts/sign-file (linux-source-7.2), compiled against the OpenSSL the
  harness uses (3.5: ML-DSA keys get signedAttrs, sign-file's CMS_NOATTR being refused
  there), each key and two hashes, issuer and serial or -k (subjectKeyIdentifier);
- `openssl cms -sign` with each flag combination that changes the encoding: signedAttrs
  (default, with sMIMECapabilities), -nosmimecap, -noattr; certificates or -nocerts;
  issuer and serial or -keyid; definite or -stream (BER, indefinite lengths); and two signers;
- third-party ML-DSA messages of tests/vectors (RFC 9882's examples, OpenSSL 3.5.7's
  generated detached signatures) re-wrapped as module signatures: their signers are not
  trusted, so the cases prove decoding and the verdict that follows, not a load.
A producer that refuses a combination (OpenSSL 3.5: ML-DSA with -noattr) makes no case."""
import base64
import os
import re
import subprocess

from .common import HERE, die, run
from .cases_common import assemble

VECTORS = os.path.join(HERE, "tests", "vectors")


def sign_file_tool(c):
    """scripts/sign-file of linux-source-7.2 built against the harness's OpenSSL, once per work dir."""
    exe = os.path.join(c.work, "sign-file")
    if os.path.exists(exe):
        return exe
    p = subprocess.run([os.path.join(HERE, "tools", "build-test-kernel"), "--source-only"], stdout=subprocess.PIPE)
    src = dict(line.split("=", 1) for line in p.stdout.decode().splitlines() if "=" in line).get("SRC")
    if p.returncode != 0 or not src:
        die("build-test-kernel --source-only failed: no scripts/sign-file")
    root = os.path.dirname(os.path.dirname(os.path.realpath(c.openssl)))
    inc, lib = os.path.join(root, "include"), os.path.join(root, "lib")
    cmd = ["cc", "-O1", "-I" + os.path.join(src, "tools", "include", "uapi"),  # as scripts/Makefile builds it
           "-o", exe, os.path.join(src, "scripts", "sign-file.c"), "-lcrypto"]
    if os.path.isdir(inc) and root != "/usr":
        cmd[1:1] = ["-I" + inc, "-L" + lib, "-Wl,-rpath," + lib]
    run(cmd)
    return exe


def producer_cases(c, keys=("rsa", "ecdsa", "mldsa65")):
    """[(name, description, function -> module bytes or None)]; None: the producer refused."""
    cases = []

    def add(name, desc, fn):
        cases.append((name, desc, fn))

    def sign_file(key, hash_, keyid):
        out = c.tmp(".ko")
        with open(c.base, "rb") as f, open(out, "wb") as g:
            g.write(f.read())
        run([sign_file_tool(c)] + (["-k"] if keyid else []) + [hash_, c.key(key), c.cert(key), out])
        with open(out, "rb") as f:
            return f.read()
    for key in keys:
        for hash_ in ("sha256", "sha512"):
            for keyid in (False, True):
                add("sign-file-%s-%s%s" % (key, hash_, "-keyid" if keyid else ""),
                    "scripts/sign-file (linux-source-7.2, OpenSSL 3.5) %s %s%s" % (hash_, key, ", -k" if keyid else ""),
                    lambda k=key, h=hash_, i=keyid: sign_file(k, h, i))

    def cms(signers, flags):
        out = c.tmp(".p7s")
        cmd = [c.openssl, "cms", "-sign", "-binary", "-outform", "DER", "-in", c.base, "-out", out, "-md", "sha256"]
        for key in signers:
            cmd += ["-signer", c.cert(key), "-inkey", c.key(key)]
        p = subprocess.run(cmd + flags, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if p.returncode != 0:
            return None
        with open(out, "rb") as f:
            return assemble(c.content, f.read())
    attrs_forms = [("attrs", []), ("nosmimecap", ["-nosmimecap"]), ("noattr", ["-noattr"])]
    for key in keys:
        for aname, aflags in attrs_forms:
            for certs in (True, False):
                for keyid in (False, True):
                    for stream in (False, True):
                        flags = aflags + ([] if certs else ["-nocerts"]) + (["-keyid"] if keyid else []) + \
                            (["-stream"] if stream else [])
                        add("cms-%s-%s-%s-%s-%s" % (key, aname, "certs" if certs else "nocerts",
                                                  "keyid" if keyid else "issuer", "ber" if stream else "der"),
                            "openssl cms -sign -md sha256 %s (%s)" % (" ".join(flags) or "(no flags)", key),
                            lambda k=key, fl=flags: cms([k], fl))
    for pair in (("rsa", "mldsa65"), ("ecdsa", "rsa")):
        for aname, aflags in attrs_forms[::2]:
            add("cms-two-signers-%s-%s-%s" % (pair[0], pair[1], aname),
                "openssl cms -sign, two signers %s and %s %s" % (pair[0], pair[1], " ".join(aflags)),
                lambda p=pair, fl=aflags: cms(list(p), fl))
    return cases + vector_cases(c)


def _detached(der):
    """A SignedData with attached content made detached: encapContentInfo's eContent removed."""
    from .der import P7
    p = P7(der)
    eci = p.sd.kids[2]
    eci.kids = eci.kids[:1]
    return p.der()


def vector_cases(c):
    """Third-party ML-DSA SignedData of tests/vectors as module signatures of the test module."""
    out = []
    d = os.path.join(VECTORS, "rfc9882-cms-ml-dsa")
    for f in sorted(os.listdir(d)):
        if not f.endswith(".pem"):
            continue
        with open(os.path.join(d, f)) as fh:
            der = base64.b64decode("".join(re.findall(r"^[A-Za-z0-9+/=]+$", fh.read(), re.M)))
        name = f[:-4]
        out.append(("rfc9882-%s-attached" % name, "RFC 9882 example %s as the module signature (content attached)" % name,
                    lambda d_=der: assemble(c.content, d_)))
        out.append(("rfc9882-%s-detached" % name, "RFC 9882 example %s, its eContent removed" % name,
                    lambda d_=der: assemble(c.content, _detached(d_))))
    d = os.path.join(VECTORS, "openssl-3.5.7-generated")
    for f in sorted(os.listdir(d)):
        if f.endswith(".p7s"):
            with open(os.path.join(d, f), "rb") as fh:
                der = fh.read()
            out.append(("ossl357-" + f[:-4].replace(".", "-"), "OpenSSL 3.5.7's %s as the module signature" % f,
                        lambda d_=der: assemble(c.content, d_)))
    return out
