"""Modules signed in two phases (modsign sign --prepare, an independent signer, modsign sign
--attach): the signer is `openssl pkeyutl -sign` over the prepared to_sign (the external μ for
ML-DSA, the SET of signedAttrs, or the digest for RSA/ECDSA; `openssl rsautl -sign` for the RSA
DigestInfo), as a KMS or HSM would sign it."""
import json
import os
import shutil

from .common import run


def remote_cases(c):
    """Cases for the Linux 7.2 kernels: prepared, signed by openssl pkeyutl, attached."""
    def remote(keyname, attrs=False, hash_="sha512", opts=(), field="to_sign", tool="pkeyutl"):
        def f():
            m = c.tmp(".ko")
            shutil.copyfile(c.base, m)
            cmd = [c.modsign, "sign", "--prepare", "-", "--cert", c.cert(keyname), "--hash", hash_, m]
            if attrs:
                cmd.append("--signed-attrs")
            line = json.loads(run(cmd).decode().splitlines()[0])
            tbs, sig = m + ".tbs", m + ".sig"
            with open(tbs, "wb") as t:
                t.write(bytes.fromhex(line[field]))
            run([c.openssl, tool, "-sign", "-inkey", c.key(keyname), "-in", tbs, "-out", sig] +
                [w for o in opts for w in ("-pkeyopt", o)])
            manifest, sigs = m + ".jsonl", m + ".sigs"
            with open(manifest, "w") as j:
                j.write(json.dumps(line) + "\n")
            os.makedirs(sigs, exist_ok=True)
            shutil.copyfile(sig, os.path.join(sigs, "%d.sig" % line["index"]))
            run([c.modsign, "sign", "-q", "--attach", manifest, "--signatures", sigs])
            with open(m, "rb") as f:
                return f.read()
        return f

    cases = []
    for alg in ["mldsa44", "mldsa65", "mldsa87"]:
        cases.append(("remote-%s-mu" % alg, "%s prepared, external mu signed by openssl pkeyutl -pkeyopt mu:1, "
                      "attached" % alg, remote(alg, opts=["mu:1"])))
    cases.append(("remote-mldsa65-mu-deterministic", "ML-DSA-65 external mu signed deterministically "
                  "(pkeyutl deterministic:1), attached", remote("mldsa65", opts=["mu:1", "deterministic:1"])))
    cases.append(("remote-mldsa65-signedattrs", "ML-DSA-65 signedAttrs SET prepared, signed pure by openssl "
                  "pkeyutl, attached", remote("mldsa65", attrs=True, opts=[])))
    cases.append(("remote-rsa-digest", "RSA SHA-256 digest prepared, signed by pkeyutl -pkeyopt digest:sha256, "
                  "attached", remote("rsa", hash_="sha256", opts=["digest:sha256"])))
    cases.append(("remote-rsa-digestinfo", "RSA SHA-512 DigestInfo prepared, PKCS#1 v1.5 padded and signed by "
                  "openssl rsautl, attached", remote("rsa", field="digest_info", tool="rsautl")))
    cases.append(("remote-ecdsa-rfc6979", "ECDSA digest prepared, signed by pkeyutl with RFC 6979 nonces, attached",
                  remote("ecdsa", opts=["digest:sha512", "nonce-type:1"])))
    return cases
