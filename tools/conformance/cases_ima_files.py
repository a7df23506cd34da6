"""File-signature cases for the IMA kernel (issue 16 §2): files carrying security.ima on tmpfs
and on ext4/XFS/btrfs/f2fs disks, appraised under FILE_CHECK (imasig, sigv3) and BPRM_CHECK
policies with the ima-sig template.

The security.ima values are built here with openssl alone (an independent construction of
struct signature_v2_hdr, security/integrity/integrity.h): type 0x03 (EVM_IMA_XATTR_DIGSIG),
version, hash_algo (enum hash_algo), the key id (last 4 bytes of the certificate's
subjectKeyIdentifier, what request_asymmetric_key's "id:%08x" matches), big-endian sig_size,
the signature.  v2 signs the file digest; v3 signs struct ima_file_id (hash_type, hash_algorithm,
digest: 2 + digest-size bytes) - hashed first for RSA/ECDSA, pure ML-DSA with an empty
context (asymmetric_verify_v3, security/integrity/digsig_asymmetric.c)."""
import hashlib
import os

from .common import KEYS, run
from .qemu import GCOV_DUMP


HASH_ALGO = {"sha1": 2, "sha256": 4, "sha384": 5, "sha512": 6, "sha224": 7}
FILESYSTEMS = ["tmpfs", "ext4", "ext4-ea_inode", "xfs", "btrfs", "f2fs"]
# The .ima keyring: mldsa65 from CONFIG_IMA_X509_PATH, the others added by /init with
# add_key (msc-xattr addkey): the built-in certificates and a P-256 leaf issued by the
# built-in ECDSA P-384 key (.ima takes keys vouched for by the built-in keyring,
# CONFIG_INTEGRITY_TRUSTED_KEYRING).
IMA_KEYS = ["mldsa65", "rsa", "ecdsa", "mldsa44", "mldsa87", "ecdsa-p256"]

# dont_* rules first: the initramfs is ramfs (rootfstype=ramfs), /proc, /sys, securityfs and
# debugfs are not appraised, so busybox and the helpers run (and /init reads a gcov kernel's
# counters, qemu.GCOV_DUMP); every other file system is.
EXCLUDE = "".join("dont_measure fsmagic=%s\ndont_appraise fsmagic=%s\n" % (m, m)
                  for m in ("0x858458f6", "0x9fa0", "0x62656572", "0x73636673", "0x64626720"))
POLICIES = {
    "file-imasig": ("FILE_CHECK", EXCLUDE + "measure func=FILE_CHECK\nappraise func=FILE_CHECK appraise_type=imasig\n",
                    "imasig"),
    "file-sigv3": ("FILE_CHECK", EXCLUDE + "measure func=FILE_CHECK\nappraise func=FILE_CHECK appraise_type=sigv3\n",
                   "sigv3"),
    "bprm-imasig": ("BPRM_CHECK", EXCLUDE + "measure func=BPRM_CHECK\nappraise func=BPRM_CHECK appraise_type=imasig\n",
                    "imasig"),
    "file-imasig-sigv2": ("FILE_CHECK", EXCLUDE + "measure func=FILE_CHECK\nappraise func=FILE_CHECK appraise_type=imasig\n",
                          "imasig"),
}
# The policy-rule probe (issue 25: ima_parse_rule and ima_validate_rule against modsign's
# policy_errno), run in one boot: "appraise func=<word> appraise_type=<type>" for every func
# word of ima_parse_rule and every appraise_type `modsign ima verify` takes, each written alone
# (msc-xattr rule; nothing is installed).
RULE_PROBE_BOOT = "file-imasig"
RULE_FUNCS = ["FILE_CHECK", "PATH_CHECK", "MODULE_CHECK", "KEXEC_KERNEL_CHECK", "KEXEC_INITRAMFS_CHECK",
              "FIRMWARE_CHECK", "FILE_MMAP", "MMAP_CHECK", "MMAP_CHECK_REQPROT", "BPRM_CHECK", "CREDS_CHECK",
              "POLICY_CHECK", "KEXEC_CMDLINE", "KEY_CHECK", "CRITICAL_DATA", "SETXATTR_CHECK"]
RULE_TYPES = ["imasig", "sigv3", "imasig|modsig"]
# The template of each boot (ima_template=): ima-sig, and ima-sigv2 (d-ngv2|n-ng|sig) for one.
TEMPLATES = {"file-imasig-sigv2": "ima-sigv2"}


class Signer:
    """Keys and certificates of the cases, signatures made with openssl."""

    def __init__(self, openssl, work):
        self.openssl, self.work = openssl, work
        self.n = 0
        self.p256 = self._p256_leaf()

    def tmp(self, suffix):
        self.n += 1
        os.makedirs(os.path.join(self.work, "tmp"), exist_ok=True)
        return os.path.join(self.work, "tmp", "s%d%s" % (self.n, suffix))

    def _p256_leaf(self):
        key, csr, crt, ext = (os.path.join(self.work, "ecdsa-p256" + s) for s in (".key.pem", ".csr", ".cert.pem", ".cnf"))
        if os.path.exists(crt):  # a rerun on the same work directory (MODSIGN_CONF_REUSE)
            return key, crt
        run([self.openssl, "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key])
        run([self.openssl, "req", "-new", "-key", key, "-subj", "/O=modsign conformance/CN=IMA P-256 leaf", "-out", csr])
        with open(ext, "w") as f:
            f.write("basicConstraints=critical,CA:FALSE\nkeyUsage=digitalSignature\n"
                    "subjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid\n")
        run([self.openssl, "x509", "-req", "-in", csr, "-CA", self.cert("ecdsa"), "-CAkey", self.key("ecdsa"),
             "-set_serial", "4343", "-days", "3650", "-extfile", ext, "-out", crt])
        return key, crt

    def key(self, name):
        return self.p256[0] if name == "ecdsa-p256" else os.path.join(KEYS, name + ".key.pem")

    def cert(self, name):
        return self.p256[1] if name == "ecdsa-p256" else os.path.join(KEYS, name + ".cert.pem")

    def der(self, name):
        return run([self.openssl, "x509", "-in", self.cert(name), "-outform", "DER"])

    def keyid(self, name):
        out = run([self.openssl, "x509", "-in", self.cert(name), "-noout", "-ext", "subjectKeyIdentifier"]).decode()
        return bytes.fromhex(out.strip().split("\n")[-1].strip().replace(":", ""))[-4:]

    def raw_sign(self, name, msg, digest_name=None):
        """openssl pkeyutl -sign: over a digest (RSA PKCS#1 v1.5 DigestInfo, ECDSA) or, for
        ML-DSA, over the message itself (-rawin, pure, empty context)."""
        src, out = self.tmp(".in"), self.tmp(".sig")
        with open(src, "wb") as f:
            f.write(msg)
        cmd = [self.openssl, "pkeyutl", "-sign", "-inkey", self.key(name), "-in", src, "-out", out]
        cmd += ["-rawin"] if name.startswith("mldsa") or name.startswith("untrusted-mldsa") else ["-pkeyopt", "digest:" + digest_name]
        run(cmd)
        with open(out, "rb") as f:
            return f.read()

    def xattr(self, name, content, version=2, hash_="sha256", header_hash=None, keyid=None):
        d = hashlib.new(hash_, content).digest()
        alg = HASH_ALGO[hash_]
        mldsa = "mldsa" in name
        if version == 3:
            file_id = bytes([3, alg]) + d
            sig = self.raw_sign(name, file_id) if mldsa else self.raw_sign(name, hashlib.new(hash_, file_id).digest(), hash_)
        else:
            sig = self.raw_sign(name, d) if mldsa else self.raw_sign(name, d, hash_)
        hdr = bytes([3, version, HASH_ALGO[header_hash or hash_]]) + (keyid or self.keyid(name)) + len(sig).to_bytes(2, "big")
        return hdr + sig


def file_cases(s, exe=None):
    """[(case name, description, content, security.ima bytes or None)].  exe: the bytes of an
    executable (BPRM_CHECK boot) used as every case's content, else per-case data."""
    cases = []

    def content(i):
        return exe if exe is not None else hashlib.sha256(b"case %d" % i).digest() * (40 + i)

    def add(name, desc, fn):
        data = content(len(cases))
        x, data = fn(data)
        cases.append((name, desc, data, x))

    def signed(key, **kw):
        return lambda data: (s.xattr(key, data, **kw), data)
    add("rsa-v2", "RSA-2048 v2, SHA-256", signed("rsa"))
    add("rsa-v2-sha512", "RSA-2048 v2, SHA-512", signed("rsa", hash_="sha512"))
    add("rsa-v3", "RSA-2048 v3 (ima_file_id), SHA-256", signed("rsa", version=3))
    add("ecdsa-p384-v2", "ECDSA P-384 v2, SHA-384", signed("ecdsa", hash_="sha384"))
    add("ecdsa-p384-v3", "ECDSA P-384 v3, SHA-256", signed("ecdsa", version=3))
    add("ecdsa-p256-v2", "ECDSA P-256 (leaf of the built-in P-384 key, added to .ima) v2", signed("ecdsa-p256"))
    add("ecdsa-p256-v3", "ECDSA P-256 leaf v3", signed("ecdsa-p256", version=3))
    add("mldsa44-v3", "ML-DSA-44 v3, SHA-256", signed("mldsa44", version=3))
    add("mldsa65-v3", "ML-DSA-65 v3, SHA-256 (the CONFIG_IMA_X509_PATH key)", signed("mldsa65", version=3))
    add("mldsa65-v3-sha512", "ML-DSA-65 v3, SHA-512", signed("mldsa65", version=3, hash_="sha512"))
    add("mldsa87-v3", "ML-DSA-87 v3, SHA-256 (4,636-byte xattr)", signed("mldsa87", version=3))
    add("mldsa65-v2", "ML-DSA-65 v2 (pure ML-DSA over the digest): not how the kernel checks ML-DSA",
        signed("mldsa65", version=2))
    add("wrong-key-rsa", "v2 by an RSA key on no keyring", signed("untrusted-rsa"))
    add("wrong-key-mldsa65", "v3 by an ML-DSA-65 key on no keyring", signed("untrusted-mldsa65", version=3))
    add("keyid-of-other-key", "ML-DSA-65 v3 signature, key id of the RSA key",
        lambda data: (s.xattr("mldsa65", data, version=3, keyid=s.keyid("rsa")), data))
    add("wrong-hash-algo", "RSA v2 over the SHA-256 digest, header says SHA-512", signed("rsa", header_hash="sha512"))
    add("wrong-hash-algo-v3", "ML-DSA-65 v3 over the SHA-256 file id, header says SHA-384",
        signed("mldsa65", version=3, header_hash="sha384"))
    add("truncated-mldsa65", "ML-DSA-65 v3, the last 100 bytes cut off",
        lambda data: (s.xattr("mldsa65", data, version=3)[:-100], data))
    add("truncated-header", "7 bytes of a v2 header", lambda data: (s.xattr("rsa", data)[:7], data))
    add("sig-size-wrong", "RSA v2, sig_size one more than the signature",
        lambda data: (lambda x: (x[:7] + (int.from_bytes(x[7:9], "big") + 1).to_bytes(2, "big") + x[9:], data))(
            s.xattr("rsa", data)))
    add("tampered-mldsa65", "ML-DSA-65 v3, file changed after signing",
        lambda data: (s.xattr("mldsa65", data, version=3), data + b"\x01"))
    add("tampered-rsa", "RSA v2, file changed after signing", lambda data: (s.xattr("rsa", data), data + b"\x01"))
    add("version-4", "ML-DSA-65 v3 signature with version byte 4",
        lambda data: (lambda x: (x[:1] + b"\x04" + x[2:], data))(s.xattr("mldsa65", data, version=3)))
    add("digest-ng", "security.ima holds a SHA-256 hash (IMA_XATTR_DIGEST_NG), no signature",
        lambda data: (bytes([4, 4]) + hashlib.sha256(data).digest(), data))
    # Every other value type setxattr takes (below IMA_XATTR_LAST) and the signature versions
    # integrity_digsig_verify does not check (issue 25: xattr_verify's and ima_get_hash_algo's
    # other branches).
    for v in (0, 1):
        add("version-%d" % v, "RSA v2 signature with version byte %d" % v,
            lambda data, v=v: (lambda x: (x[:1] + bytes([v]) + x[2:], data))(s.xattr("rsa", data)))
    add("digest-old-sha1", "security.ima type 0x01 (IMA_XATTR_DIGEST) with the file's SHA-1, 21 bytes",
        lambda data: (b"\x01" + hashlib.sha1(data).digest(), data))
    add("digest-old-md5", "security.ima type 0x01 with the file's MD5 in 17 bytes",
        lambda data: (b"\x01" + hashlib.md5(data).digest(), data))
    add("type-0", "security.ima type 0x00 and a SHA-256 hash", lambda data: (b"\x00\x04" + hashlib.sha256(data).digest(), data))
    add("evm-hmac", "security.ima type 0x02 (EVM_XATTR_HMAC), 20 bytes", lambda data: (b"\x02" + bytes(20), data))
    add("evm-portable", "security.ima type 0x05 (EVM_XATTR_PORTABLE_DIGSIG) holding an RSA v2 signature's body",
        lambda data: (lambda x: (b"\x05" + x[1:], data))(s.xattr("rsa", data)))
    add("verity-sig", "security.ima type 0x06 (IMA_VERITY_DIGSIG) holding an RSA v3 signature's body",
        lambda data: (lambda x: (b"\x06" + x[1:], data))(s.xattr("rsa", data, version=3)))
    add("no-xattr", "no security.ima", lambda data: (None, data))
    return cases


FILES_INIT = r"""#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t devtmpfs devtmpfs /dev
mount -t sysfs sysfs /sys
mount -t securityfs securityfs /sys/kernel/security
echo 0 > /proc/sys/kernel/printk_ratelimit
dmesg -c >/dev/null
echo "MSC-BOOT $(uname -r)"
IMA=/sys/kernel/security/ima
mkdir -p /mnt/tmpfs && mount -t tmpfs -o size=256m tmpfs /mnt/tmpfs
while read -r dev fs opts; do
  mkdir -p /mnt/$fs
  # LABEL=<name>: the disk whose file system has that label (virtio-ccw probes the disks
  # in no fixed order, so vda... need not follow qemu's -drive order on s390x).
  case $dev in LABEL=*) dev=$(findfs "$dev") ;; *) dev=/dev/$dev ;; esac
  if mount -t ${fs%%-*} ${opts:+-o $opts} $dev /mnt/$fs 2>/tmp/m; then echo "MSC-MOUNT $fs ok"
  else echo "MSC-MOUNT $fs failed $(cat /tmp/m)"; dmesg -c | while IFS= read -r l; do echo "MSC-LOG mount-$fs $l"; done; fi
done < /etc/disks
for k in /keys/*.der; do echo "MSC-ADDKEY $k $(/bin/msc-xattr addkey $k)"; done
grep -h '' /proc/keys | while IFS= read -r l; do echo "MSC-KEY $l"; done
while read -r fs f; do cp /files/$f /mnt/$fs/$f; chmod 755 /mnt/$fs/$f; done < /files/list
/bin/msc-xattr apply /files/xattrs | while IFS= read -r l; do echo "MSC-SETX $l"; done
sync
[ -f /etc/fit ] && . /etc/fit
if [ -f /etc/ima-policy ]; then
  cat /etc/ima-policy > $IMA/policy || echo "MSC-ERROR writing the IMA policy failed"
  while IFS= read -r l; do echo "MSC-POLICY $l"; done < $IMA/policy
fi
dmesg -c >/dev/null
while read -r fs f; do
  t=$fs/$f
  echo "MSC-FILE $t $(/bin/msc-xattr $(cat /etc/action) /mnt/$fs/$f)"
  dmesg -c | while IFS= read -r l; do echo "MSC-LOG $t $l"; done
  [ -d $IMA ] && echo "MSC-IMA-SIZE $t $(wc -c < $IMA/binary_runtime_measurements)"
done < /files/list
if [ -f /etc/rule-probe ]; then
  /bin/msc-xattr rule /etc/rule-probe | while IFS= read -r l; do echo "MSC-RULE $l"; done
  dmesg -c >/dev/null
fi
if [ -d $IMA ]; then
  echo MSC-IMA-BEGIN
  base64 $IMA/binary_runtime_measurements
  echo MSC-IMA-END
fi
""" + GCOV_DUMP + """echo MSC-DONE
poweroff -f
"""
