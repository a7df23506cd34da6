"""kexec_file_load cases (issue 19 §4): kernel images loaded (never booted) in the guest by
msc-kexec (tests/kernel/kexec_load.c), each against `modsign verify --usage kexec`; and the
loader's probe, one check at a time (probe_cases: an empty file, then each refusal of
bzImage64_probe or arm64's image_probe).

The image is a Debian vmlinuz (the booted Debian kernel's own, or Debian unstable's for the
built 7.2 kernel), as shipped and changed with sbattach/sbsign or a byte edit.  On Debian's
kernels the secondary keyring holds only the build-time module key and the platform keyring
is empty (no UEFI under qemu), so Debian's own signature is ENOKEY there: without
KEXEC_SIG_FORCE every failure is logged and the image loads (0), under lockdown=integrity it
is EPERM.  The built 7.2 and 7.3 IMA kernels (mldsa-ima, mldsa73-ima) have
CONFIG_KEXEC_SIG_FORCE, which returns the verification's own errno, and trust the test keys,
so they also take images re-signed with them (rsa: loads; blacklisted-rsa: its tbs: is listed, EKEYREJECTED).
The built arm64 IMA kernel (mldsa-ima-arm64) loads Debian unstable's signed arm64 Image and its
copies (arch/arm64/kernel/kexec_image.c).  arm64 has no KEXEC_SIG_FORCE, so every image loads;
its command line's dyndbg makes kimage_validate_signature() log the check's errno ("kernel
signature verification failed (-N)"), and the row compares that errno with modsign's sig_errno."""
import errno
import json
import os
import re
import shutil
import subprocess

from .common import KEYS, die, run, static_helper

# kernel name: (sig_force, Debian suite of the image or None for the booted kernel's own, test keys trusted)
KEXEC = {
    "deb12": (False, None, False),
    "deb13": (False, None, False),
    "deb13-lockdown": (False, None, False),
    "debsid": (False, None, False),
    "mldsa-ima": (True, "unstable", True),
    "mldsa73-ima": (True, "unstable", True),
    "mldsa-ima-arm64": (False, "unstable", True),
}
ERRNO_NAMES = {**errno.errorcode, 524: "ENOTSUPP"}


def _cert_table(data):
    """(offset, size) of the Certificate Table (data directory 4) of a PE image."""
    pe = int.from_bytes(data[0x3c:0x40], "little")
    opt = pe + 24
    magic = int.from_bytes(data[opt:opt + 2], "little")
    dd = opt + (96 if magic == 0x10b else 112)
    e = dd + 4 * 8
    return int.from_bytes(data[e:e + 4], "little"), int.from_bytes(data[e + 4:e + 8], "little")


def _flip(data):
    d = bytearray(data)
    d[len(d) // 2] ^= 0x01  # inside the compressed kernel: the digest changes, the probe does not
    return bytes(d)


def _revision(data):
    off, _ = _cert_table(data)
    d = bytearray(data)
    d[off + 4:off + 6] = (0x0100).to_bytes(2, "little")  # WIN_CERT_REVISION_1_0
    return bytes(d)


def _poke(data, off, fn, size=1):
    """data with the little-endian field of `size` bytes at off replaced by fn(its value)."""
    d = bytearray(data)
    d[off:off + size] = (fn(int.from_bytes(d[off:off + size], "little")) & ((1 << 8 * size) - 1)).to_bytes(size, "little")
    return bytes(d)


def probe_cases(signed, arch):
    """The loader's probe, one check at a time, on the signed image (the probe comes before the
    signature check): kernel_read_file's refusal of an empty file, then bzImage64_probe's
    (x86_64: struct setup_header at 0x1f1) or image_probe's (arm64: struct arm64_image_header)."""
    cases = [("empty", "an empty file", b"")]
    if arch == "arm64":
        return cases + [("probe-too-short", "the signed Image cut to 63 bytes (arm64_image_header is 64)", signed[:63]),
                        ("probe-no-magic", "the signed Image, its magic ARM\\x64 at byte 56 changed",
                         _poke(signed, 56, lambda v: v ^ 0x01))]
    return cases + [
        ("probe-too-short", "the signed image cut to 1023 bytes (two sectors are 1024)", signed[:1023]),
        ("probe-no-hdrs", "the signed image, its HdrS at 0x202 changed", _poke(signed, 0x202, lambda v: v ^ 0x01)),
        ("probe-no-boot-flag", "the signed image, boot_flag 0xaa55 at 0x1fe changed", _poke(signed, 0x1fe, lambda v: 0xaa54, 2)),
        ("probe-protocol-2.11", "the signed image, boot protocol version 2.11", _poke(signed, 0x206, lambda v: 0x020b, 2)),
        ("probe-no-loaded-high", "the signed image, LOADED_HIGH cleared in loadflags", _poke(signed, 0x211, lambda v: v & ~0x01)),
        ("probe-no-xlf-kernel-64", "the signed image, XLF_KERNEL_64 cleared in xloadflags",
         _poke(signed, 0x236, lambda v: v & ~0x01, 2)),
        ("probe-no-xlf-above-4g", "the signed image, XLF_CAN_BE_LOADED_ABOVE_4G cleared in xloadflags",
         _poke(signed, 0x236, lambda v: v & ~0x02, 2)),
        ("probe-no-xlf-5level", "the signed image, XLF_5LEVEL cleared in xloadflags",
         _poke(signed, 0x236, lambda v: v & ~0x20, 2)),
    ]


def _pe(data):
    """(offset of the PE signature, offset of the optional header, offset of the section table,
    number of sections) of a PE image."""
    pe = int.from_bytes(data[0x3c:0x40], "little")
    nsec = int.from_bytes(data[pe + 6:pe + 8], "little")
    opt_size = int.from_bytes(data[pe + 20:pe + 22], "little")
    return pe, pe + 24, pe + 24 + opt_size, nsec


def pe_cases(signed):
    """verify_pefile's checks one at a time on the signed image (issue 25: pefile_parse_binary,
    pefile_strip_sig_wrapper): the optional header's magic, the Certificate Table's size and
    the WIN_CERTIFICATE wrapper's fields."""
    _, opt, _, _ = _pe(signed)
    off, size = _cert_table(signed)
    dd = opt + 112 + 4 * 8  # the Certificate Table's data directory entry (PE32+)
    return [
        ("pe-magic-pe32", "the signed image, optional header magic 0x10b (PE32)", _poke(signed, opt, lambda v: 0x10b, 2)),
        ("pe-magic-unknown", "the signed image, optional header magic 0x0000", _poke(signed, opt, lambda v: 0, 2)),
        ("cert-table-size-7", "the signed image, Certificate Table size 7", _poke(signed, dd + 4, lambda v: 7, 4)),
        ("wrapper-length-too-big", "the signed image, WIN_CERTIFICATE dwLength past the table",
         _poke(signed, off, lambda v: size + 8, 4)),
        ("wrapper-length-9", "the signed image, WIN_CERTIFICATE dwLength 9", _poke(signed, off, lambda v: 9, 4)),
        ("wrapper-type-1", "the signed image, WIN_CERTIFICATE wCertificateType 1 (X.509)",
         _poke(signed, off + 6, lambda v: 1, 2)),
        ("pkcs7-not-sequence", "the signed image, the PKCS#7's first byte 0x31", _poke(signed, off + 8, lambda v: 0x31)),
        ("pkcs7-short-length", "the signed image, the PKCS#7's length in short form (0x7f)",
         _poke(signed, off + 9, lambda v: 0x7f)),
        ("pkcs7-length-0x81", "the signed image, the PKCS#7's length form 0x81", _poke(signed, off + 9, lambda v: 0x81)),
    ]


def section_cases(rsa):
    """The re-signed test-rsa image with its section table edited after signing: the digest
    (pefile_digest_pe_contents sorts the sections, skips empty ones) no longer matches."""
    _, _, sec, nsec = _pe(rsa)
    if nsec < 2:
        return []
    d = bytearray(rsa)
    d[sec:sec + 40], d[sec + 40:sec + 80] = rsa[sec + 40:sec + 80], rsa[sec:sec + 40]
    return [("test-rsa-sections-swapped", "re-signed with the RSA test key, its first two section headers swapped",
             bytes(d)),
            ("test-rsa-section-empty", "re-signed with the RSA test key, SizeOfRawData of its first section 0",
             _poke(rsa, sec + 16, lambda v: 0, 4))]


def kexec_cases(work, vmlinuz, test_keys, arch=None):
    """[(name, description, bytes)] for one kernel (arch: the image's, None for x86_64)."""
    for t in ("sbattach", "sbsign"):
        if not shutil.which(t):
            die("%s not found (apt-get install sbsigntool)" % t, 77)
    d = os.path.join(work, "kexec-src")
    os.makedirs(d, exist_ok=True)
    with open(vmlinuz, "rb") as f:
        signed = f.read()
    unsigned = os.path.join(d, "unsigned.efi")
    shutil.copyfile(vmlinuz, unsigned)
    run(["sbattach", "--remove", unsigned])
    with open(unsigned, "rb") as f:
        unsigned_data = f.read()

    def sign(key, cert):
        out = os.path.join(d, os.path.basename(key) + ".efi")
        run(["sbsign", "--key", key, "--cert", cert, "--output", out, unsigned])
        with open(out, "rb") as f:
            return f.read()

    ukey, ucert = os.path.join(d, "unknown.key"), os.path.join(d, "unknown.crt")
    run(["openssl", "req", "-new", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ukey, "-out", ucert,
         "-subj", "/CN=modsign kexec unknown key", "-days", "3650"])
    cases = [
        ("debian-signed", "Debian's signed vmlinuz as shipped", signed),
        ("unsigned", "the same image, signature removed (sbattach --remove)", unsigned_data),
        ("flipped-byte", "Debian's signed image, one byte of the compressed kernel flipped", _flip(signed)),
        ("unknown-key", "re-signed (sbsign) with a key no keyring holds", sign(ukey, ucert)),
        ("wrapper-revision-1.0", "Debian's signed image, WIN_CERTIFICATE wRevision 0x0100", _revision(signed)),
    ]
    # verify_pefile's checks are the same code on both architectures: on x86 only, as every
    # case is a copy of the image in the initramfs (arm64's uncompressed Image is ~40 MB).
    cases += probe_cases(signed, arch) + (pe_cases(signed) if arch is None else [])
    if test_keys:
        rsa = sign(os.path.join(KEYS, "rsa.key.pem"), os.path.join(KEYS, "rsa.cert.pem"))
        cases += [
            ("test-rsa", "re-signed with the trusted RSA test key", rsa),
            ("test-rsa-flipped-byte", "the same, one byte flipped after signing", _flip(rsa)),
            ("test-rsa-appended", "the same, 8 bytes appended after the Certificate Table", rsa + b"\0" * 8),
        ] + (section_cases(rsa) if arch is None else []) + [
            ("blacklisted-signer", "re-signed with blacklisted-rsa (trusted, its tbs: listed)",
             sign(os.path.join(KEYS, "blacklisted-rsa.key.pem"), os.path.join(KEYS, "blacklisted-rsa.cert.pem"))),
        ]
    shutil.rmtree(d, ignore_errors=True)
    return cases


def kexec_initramfs(work, cases, arch=None):
    """initramfs entries: /kexec/<case>, /kexec/list and /bin/msc-kexec (built statically, for
    `arch` with Debian's cross compiler)."""
    helper = static_helper(work, "msc-kexec", "kexec_load.c", arch)
    entries = [("kexec", 0o40755, b"", 0, 0), ("bin/msc-kexec", 0o100755, helper, 0, 0)]
    entries += [("kexec/" + n, 0o100644, data, 0, 0) for n, _, data in cases]
    entries.append(("kexec/list", 0o100644, "".join(n + "\n" for n, _, _ in cases).encode(), 0, 0))
    return entries


def kexec_predict(modsign, profile, flags, keyring, paths, blacklist, sig_force, arch=None):
    """modsign verify --usage kexec --json [--kexec-arch ARCH]: {case: json}."""
    cmd = [modsign, "verify", "--usage", "kexec", "--kernel", profile, "--json"]
    cmd += ["--kexec-arch", arch] if arch else []
    # qemu's x86 "max" CPU has LA57 and every x86 kernel here runs 5-level page tables on it
    # (the probe-no-xlf-5level case shows it: "bzImage cannot handle 5-level paging mode").
    cmd += [] if arch else ["--kexec-5level-paging"]
    cmd += [f for f in flags if f == "--lockdown"]
    if sig_force:
        cmd.append("--kexec-sig-force")
    if blacklist:
        cmd += ["--blacklist", blacklist[0]]
    for k in keyring:
        cmd += ["--keyring", k]
    p = subprocess.run(cmd + paths, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return {os.path.basename(j["path"]): j for j in map(json.loads, p.stdout.decode().splitlines())}


SIG_FAILED = re.compile(r"kernel signature verification failed \((-\d+)\)")


def kexec_rows(serial, cases, pred, sig_logged=False):
    """Rows: the kernel's kexec_file_load result against the prediction.  The kernel's `loads`
    (0) agrees with modsign's loads and loads-unverified (the kernel does not say which),
    unless `sig_logged` (dyndbg on kimage_validate_signature): then a load after a failed
    check is "loads (signature ERRNO)" on both sides, ERRNO the kernel's logged one and
    modsign's sig_errno."""
    got, logs = {}, {}
    with open(serial, "rb") as f:
        for line in f.read().decode(errors="replace").replace("\r", "").split("\n"):
            if line.startswith("MSC-KEXEC "):
                name, rest = line[10:].split(" ", 1)
                rc, out = rest.split(" ", 1)
                out = out[4:] if out.startswith("out=") else out
                if rc == "rc=0":
                    got[name] = ("loads", out)
                elif "errno=" in out:
                    n = int(out.split("errno=")[1].split()[0])
                    got[name] = ("refused " + ERRNO_NAMES.get(n, str(n)), out)
                else:
                    got[name] = ("error (%s)" % out, out)
            elif line.startswith("MSC-KLOG "):
                _, name, text = line.split(" ", 2)
                logs.setdefault(name, []).append(text)
    rows = []
    for name, desc, _ in cases:
        k, out = got.get(name, ("no result", ""))
        failed = next((SIG_FAILED.search(t) for t in logs.get(name, []) if SIG_FAILED.search(t)), None)
        if sig_logged and k == "loads" and failed:
            n = -int(failed.group(1))
            k = "loads (signature %s)" % ERRNO_NAMES.get(n, str(n))
        j = pred.get(name)
        if j is None:
            m, want, reason = "no prediction", "?", ""
        else:
            m = j["outcome"] if j["outcome"] == "loads" else "%s %s" % (j["outcome"], j["errno"])
            want = "loads" if j["outcome"] in ("loads", "loads-unverified") else "refused " + j["errno"]
            if sig_logged and j["outcome"] == "loads-unverified":
                want = "loads (signature %s)" % j["sig_errno"]
            reason = j["reason"]
        rows.append({"case": "kexec-" + name, "desc": desc, "kernel": k, "taint": "", "insmod": out,
                     "log": logs.get(name, []), "modsign": m, "reason": reason, "agree": k == want})
    return rows
