"""The kernels (KERNELS): fetching or building each one, and running its cases
(run_kernel) into rows of kernel result against prediction."""
import os
import re
import shutil
import subprocess
import time

from .common import HERE, KEYS, die, find_module, log, run
from .cases_common import Ctx
from .cases_mldsa import mldsa_cases
from .cases_debian import debian_cases
from .cases_ima import ima_cases, overflow_cases
from .mutants import run_mutants
from .gen_grammar import generated
from .cases_kexec import KEXEC, kexec_cases, kexec_initramfs, kexec_predict, kexec_rows
from .qemu import GCOV, boot, crypto_modules, finit_entry, make_initramfs, parse_serial, tag
from .files_run import run_files
from .fit_run import run_fit
from .foreign_run import foreign_kernel, run_foreign
from .predict import (ima_initramfs, ima_kernel_view, ima_list_order, ima_policy_row, ima_predict, ima_replay_row,
                      ima_rows, predict)


def kv(text):
    return dict(line.split("=", 1) for line in text.decode().splitlines() if "=" in line)


# --- kernels ---------------------------------------------------------------------------------
def debian_kernel(suite):
    cmd = [os.path.join(HERE, "tools", "fetch-debian-kernel")] + (["--suite", suite] if suite else [])
    p = subprocess.run(cmd, stdout=subprocess.PIPE)
    if p.returncode == 77:
        die("fetch-debian-kernel %s: skipped" % (suite or ""), 77)
    if p.returncode != 0:
        die("fetch-debian-kernel %s failed" % (suite or ""))
    e = kv(p.stdout)
    mod = find_module(os.path.join(e["MODULES"], "lib", "modules", e["KVER"]), "nls_iso8859-1.ko")
    deps = run(["modinfo", "-F", "depends", mod]).decode().strip() if shutil.which("modinfo") else ""
    if deps:
        die("%s depends on %s" % (mod, deps))
    certs = sorted(os.path.join(e["DIR"], f) for f in os.listdir(e["DIR"]) if re.match(r"builtin-\d+\.der$", f))
    return {"vmlinuz": e["VMLINUZ"], "kver": e["KVER"], "module": mod, "modname": "nls_iso8859_1",
            "moddir": os.path.join(e["MODULES"], "lib", "modules", e["KVER"]),
            "keyring": certs}


PEM_CERT = re.compile(r"-----BEGIN CERTIFICATE-----[A-Za-z0-9+/=\s]*?-----END CERTIFICATE-----")


def bundle_keyring(bundle):
    """The committed certificate files (tests/kernel/keys/*.cert.pem) making up a built
    kernel's trusted PEM bundle (build-test-kernel's CERTS, its CONFIG_SYSTEM_TRUSTED_KEYS),
    in the bundle's order: the keyring modsign is given is the one the kernel was built with."""
    norm = lambda b: "".join(b.split())  # noqa: E731
    files = {}
    for f in sorted(os.listdir(KEYS)):
        if f.endswith(".cert.pem"):
            with open(os.path.join(KEYS, f)) as fh:
                for b in PEM_CERT.findall(fh.read()):
                    files[norm(b)] = os.path.join(KEYS, f)
    with open(bundle) as fh:
        blocks = PEM_CERT.findall(fh.read())
    if not blocks:
        die("no certificate in %s" % bundle)
    out = []
    for b in blocks:
        if norm(b) not in files:
            die("%s holds a certificate that is not in %s" % (bundle, KEYS))
        out.append(files[norm(b)])
    return out


def built_kernel(variant=None, version="7.2", arch=None):
    """variant: None (waiver off), "waive" or "ima"; version: the series, 7.2 or 7.3
    (tools/build-test-kernel --version <version> --<variant>, and --gcov under --gcov);
    arch: another architecture (--arch s390x or arm64), whose initramfs takes Debian's busybox of
    that architecture (tools/fetch-debian-foreign)."""
    cmd = [os.path.join(HERE, "tools", "build-test-kernel"), "--version", version] + (["--" + variant] if variant else [])
    cmd += ["--gcov"] if GCOV["dir"] else []  # tools/kernel-coverage: the instrumented build
    cmd += ["--arch", arch] if arch else []
    p = subprocess.run(cmd, stdout=subprocess.PIPE)
    if p.returncode == 77:
        die("build-test-kernel --version %s: skipped" % version, 77)
    if p.returncode != 0:
        die("build-test-kernel --version %s failed" % version)
    e = kv(p.stdout)
    keyring = bundle_keyring(e["CERTS"])
    k = {"vmlinuz": e["BZIMAGE"], "kver": e["KVER"], "module": e["TESTMOD"], "modname": "modsign_test",
         "keyring": keyring, "blacklist": (e["BLACKLIST"], [os.path.join(KEYS, "blacklisted-rsa.cert.pem")]),
         "ima": variant == "ima", "measures_policy_writes": version != "7.2"}
    if arch:
        k.update({"arch": arch, "busybox": foreign_kernel("unstable", arch)["busybox"]})
    return k


# name: (title, modsign profile, extra verify flags, extra kernel command line, getter).
# --kernel-lacks: the signature algorithms each Debian kernel's .config leaves out (Debian 12's
# 6.1: "# CONFIG_CRYPTO_ECDSA is not set"; unstable's 7.2: "# CONFIG_CRYPTO_MLDSA is not set"),
# found by the mutation campaign (a self-signed embedded certificate of that algorithm: ENOENT);
# and the digests: every Debian kernel has CONFIG_CRYPTO_STREEBOG=m and no SM3 (its
# initramfs lets request_module() load streebog_generic), the built kernels neither (mutant
# 20261203:1043, a Streebog digestAlgorithm under Debian's signature: EKEYREJECTED).
# --module-decompress: each Debian kernel's CONFIG_MODULE_DECOMPRESS / CONFIG_MODULE_COMPRESS_*
# (Debian 12: not set; Debian 13 and unstable: xz), what finit_module(MODULE_INIT_COMPRESSED_FILE)
# of the .ko.xz cases meets.
BUILT_LACKS = ["--kernel-lacks", "sm3", "--kernel-lacks", "streebog"]  # tests/kernel/kernel.config
# KEXEC_DEBUG: on a kernel without KEXEC_SIG_FORCE (Debian's, the arm64 build), the pr_debug
# line of kimage_validate_signature that gives a failed check's errno (cases_kexec.kexec_rows).
KEXEC_DEBUG = 'dyndbg="func kimage_validate_signature +p"'
KERNELS = {
    "deb12": ("Debian 12 cloud 6.1", "v6.1", ["--module-decompress", "none", "--kernel-lacks", "ecdsa", "--kernel-lacks", "sm3"],
              KEXEC_DEBUG, lambda: debian_kernel("bookworm")),
    "deb13": ("Debian 13 cloud 6.12", "v6", ["--module-decompress", "xz", "--kernel-lacks", "sm3"], KEXEC_DEBUG,
              lambda: debian_kernel("trixie")),
    "deb13-lockdown": ("Debian 13 cloud 6.12, lockdown=integrity", "v6", ["--lockdown", "--module-decompress", "xz", "--kernel-lacks", "sm3"],
                       "lockdown=integrity " + KEXEC_DEBUG,
                       lambda: debian_kernel("trixie")),
    "debsid": ("Debian unstable cloud 7.2", "v7.0", ["--module-decompress", "xz", "--kernel-lacks", "mldsa", "--kernel-lacks", "sm3"],
               KEXEC_DEBUG, lambda: debian_kernel("unstable")),
    "mldsa": ("7.2.13 ML-DSA, waiver off", "v7.0", BUILT_LACKS, "", lambda: built_kernel()),
    "mldsa-waive": ("7.2.13 ML-DSA, waiver on", "v7.0", ["--waive-mldsa-authattrs"] + BUILT_LACKS, "", lambda: built_kernel("waive")),
    "mldsa-enforce": ("7.2.13 ML-DSA, waiver on, module.sig_enforce=1", "v7.0",
                      ["--waive-mldsa-authattrs", "--enforce"] + BUILT_LACKS, "module.sig_enforce=1", lambda: built_kernel("waive")),
    "mldsa-ima": ("7.2.13 ML-DSA + IMA (appraise_type=imasig|modsig), waiver off", "v7.0", BUILT_LACKS,
                  "ima_template=ima-modsig", lambda: built_kernel("ima")),
    "mldsa-ima-files": ("7.2.13 IMA, files with security.ima (FILE_CHECK imasig/sigv3, BPRM_CHECK)", "v7.2", [],
                        "rootfstype=ramfs no_timer_check ima_template=ima-sig|ima-sigv2", lambda: built_kernel("ima")),
    "mldsa-ima-xattr": ("7.2.13 IMA kernel, security.ima limits and overhead per file system", "v7.2", [],
                        "rootfstype=ramfs no_timer_check", lambda: built_kernel("ima")),
    # Linux 7.3 (Debian experimental's linux-source-7.3), the same configurations and the same
    # profile: crypto/asymmetric_keys/, certs/ and the signature path of kernel/module/ are
    # those of 7.2.13 (docs/kernel-semantics.md, "Linux 7.3").
    "mldsa73": ("7.3-rc7 ML-DSA, waiver off", "v7.0", BUILT_LACKS, "", lambda: built_kernel(None, "7.3")),
    "mldsa73-waive": ("7.3-rc7 ML-DSA, waiver on", "v7.0", ["--waive-mldsa-authattrs"] + BUILT_LACKS, "", lambda: built_kernel("waive", "7.3")),
    "mldsa73-enforce": ("7.3-rc7 ML-DSA, waiver on, module.sig_enforce=1", "v7.0",
                        ["--waive-mldsa-authattrs", "--enforce"] + BUILT_LACKS, "module.sig_enforce=1",
                        lambda: built_kernel("waive", "7.3")),
    "mldsa73-ima": ("7.3-rc7 ML-DSA + IMA (appraise_type=imasig|modsig), waiver off", "v7.0", BUILT_LACKS,
                    "ima_template=ima-modsig", lambda: built_kernel("ima", "7.3")),
    # Another architecture under qemu-system-s390x (tools/conformance/foreign_run.py): IMA in
    # the big-endian kernel's byte order, ima_canonical_fmt off and on.
    "debsid-s390x": ("Debian unstable s390x 7.2 (big-endian), IMA ima-sig, ima_canonical_fmt off/on", "v7.2",
                     ["--kernel-arch", "s390x"], "ima_hash=sha256 [ima_canonical_fmt]",
                     lambda: foreign_kernel("unstable", "s390x")),
    "debsid-arm64": ("Debian unstable arm64 7.2 (little-endian), IMA ima-sig, ima_canonical_fmt off/on", "v7.2",
                     ["--kernel-arch", "arm64"], "ima_hash=sha256 [ima_canonical_fmt]",
                     lambda: foreign_kernel("unstable", "arm64")),
    # The 7.2.13 IMA kernel built for s390x (tools/build-test-kernel --arch s390x): the module
    # and IMA-modsig cases of mldsa-ima, records in the big-endian kernel's order, and with
    # ima_canonical_fmt in little-endian.
    "mldsa-ima-s390x": ("7.2.13 ML-DSA + IMA on s390x (big-endian), waiver off", "v7.0",
                        BUILT_LACKS + ["--kernel-arch", "s390x"], "ima_template=ima-modsig",
                        lambda: built_kernel("ima", arch="s390x")),
    # The 7.2.13 IMA kernel built for arm64 (tools/build-test-kernel --arch arm64): the same
    # cases, and kexec_file_load of Debian unstable's signed arm64 Image (cases_kexec.py).
    # arm64 has no KEXEC_SIG_FORCE: dyndbg prints the errno of a failed check.
    "mldsa-ima-arm64": ("7.2.13 ML-DSA + IMA on arm64, kexec of Debian's signed arm64 Image, waiver off", "v7.0",
                        BUILT_LACKS + ["--kernel-arch", "arm64"],
                        "ima_template=ima-modsig " + KEXEC_DEBUG,
                        lambda: built_kernel("ima", arch="arm64")),
    # The file-signature boots of mldsa-ima-files on the s390x build (files_run.py).
    "mldsa-ima-files-s390x": ("7.2.13 IMA on s390x (big-endian), files with security.ima (FILE_CHECK imasig/sigv3, "
                              "BPRM_CHECK)", "v7.2", ["--kernel-arch", "s390x"],
                              "rootfstype=ramfs ima_template=ima-sig|ima-sigv2", lambda: built_kernel("ima", arch="s390x")),
    "mldsa-ima-s390x-canonical": ("7.2.13 ML-DSA + IMA on s390x, ima_canonical_fmt", "v7.0",
                                  BUILT_LACKS + ["--kernel-arch", "s390x", "--ima-canonical-fmt"],
                                  "ima_template=ima-modsig ima_canonical_fmt", lambda: built_kernel("ima", arch="s390x")),
}
FILE_KERNELS = {"mldsa-ima-files": run_files, "mldsa-ima-files-s390x": run_files, "mldsa-ima-xattr": run_fit, "debsid-s390x": run_foreign,
                "debsid-arm64": run_foreign}


def run_kernel(name, args, modsign, openssl):
    title, profile, flags, cmdline, get = KERNELS[name]
    t0 = time.time()
    k = get()
    t_get = time.time() - t0
    if name in FILE_KERNELS:
        rows, boots, t_boot = FILE_KERNELS[name](k, args, modsign, openssl)
        agree = sum(r["agree"] for r in rows)
        log("%s: %d/%d agree; boots %.0f s" % (name, agree, len(rows), t_boot))
        for r in rows:
            if not r["agree"]:
                log("  DISAGREE %s: kernel %s, modsign %s (%s)" % (r["case"], r["kernel"], r["modsign"], r["reason"][:300]))
        return {"name": name, "title": title, "profile": profile, "cmdline": cmdline, "ima": {}, "boots": boots,
                "release": next((b["release"] for b in boots if b.get("release")), None), "rows": rows, "keys": [],
                "t_kernel": t_get, "t_boot": t_boot}
    work = os.path.join(args.workdir, name)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(work, "cases"))
    base = k["module"]
    if name.startswith("deb"):
        base = os.path.join(work, "base.ko")
        run([modsign, "strip", "--dest", base, k["module"]])
    c = Ctx(modsign, openssl, base, work)
    only = getattr(args, "mutants_only", False)
    defs = ([] if only else debian_cases(c, k["module"]) if name.startswith("deb") else
            ima_cases(c) + overflow_cases(c, k.get("arch")) if k.get("ima") else mldsa_cases(c))
    cases, descs = [], {}
    for i, (cname, desc, fn) in enumerate(defs, 1):
        # A compressed case keeps its suffix (.ko.xz): /init loads it with
        # MODULE_INIT_COMPRESSED_FILE, so the kernel decompresses it (module_decompress).
        fname = "%02d-%s" % (i, cname) if re.search(r"\.ko\.(xz|zst|gz)$", cname) else "%02d-%s.ko" % (i, cname)
        data = fn()
        if data is None:  # a producer that refuses the combination (cases_producers.py)
            continue
        with open(os.path.join(work, "cases", fname), "wb") as f:
            f.write(data)
        cases.append((fname, data))
        descs[fname] = desc
    shutil.rmtree(os.path.join(work, "tmp"), ignore_errors=True)
    paths = [os.path.join(work, "cases", f) for f, _ in cases]
    initrd = os.path.join(work, "initramfs.cpio")
    extra = list(crypto_modules(k["moddir"])) if k.get("moddir") else []
    if name.startswith("deb"):
        extra.append(finit_entry(work))
    if k.get("ima"):
        pred = ima_predict(modsign, paths, k["keyring"], k["blacklist"], flags)
        extra += ima_initramfs(work, k.get("arch"))
    else:
        pred = predict(modsign, profile, flags, k["keyring"], paths, k.get("blacklist"))
    mextra = list(extra)  # the mutant batches' entries: no kexec cases
    mutant_args = (name, k, c, args, profile, flags, mextra, plain_rows, cmdline,
                   open(k["module"], "rb").read() if name.startswith("deb") else None)
    if only:  # --mutants-only: no fixed cases, no boot for them
        mut = run_mutants(*mutant_args) if args.mutants else None
        gen = run_mutants(*mutant_args, generated=generated(c, args.grammar, mutant_args[-1])) if args.grammar else None
        return {"name": name, "title": title, "profile": " ".join([profile] + flags), "cmdline": cmdline,
                "ima": {}, "release": (mut or gen).get("release"), "rows": [], "keys": [], "t_kernel": t_get, "t_boot": 0,
                "mutants": mut, "generated": gen}
    kx = None
    if name in KEXEC:  # kexec_file_load cases, run after the module cases (cases_kexec.py)
        sig_force, suite, test_keys = KEXEC[name]
        karch = k.get("arch")  # the image: Debian's vmlinuz of the kernel's architecture
        t1 = time.time()
        image = ((foreign_kernel(suite, karch) if karch else debian_kernel(suite))["vmlinuz"] if suite
                 else k["vmlinuz"])
        kx = kexec_cases(work, image, test_keys, karch)
        kdir = os.path.join(work, "kexec")
        os.makedirs(kdir, exist_ok=True)
        for n, _, data in kx:
            with open(os.path.join(kdir, n), "wb") as f:
                f.write(data)
        kpred = kexec_predict(modsign, profile, flags, k["keyring"], [os.path.join(kdir, n) for n, _, _ in kx],
                              k.get("blacklist"), sig_force, karch)
        extra += kexec_initramfs(work, kx, karch)
        log("%s: %d kexec cases prepared in %.0f s" % (name, len(kx), time.time() - t1))
    make_initramfs(initrd, cases, k["modname"], extra, busybox=k.get("busybox"))
    serial = os.path.join(work, "serial.log")
    t_boot = boot(k["vmlinuz"], initrd, serial, args.timeout, cmdline, arch=k.get("arch", "x86_64"))
    results, logs, keys, release, done, ima = parse_serial(serial)
    if release is None:
        log("%s: the kernel did not reach /init (see %s)" % (name, serial))
    elif not done:
        log("%s: /init did not finish (see %s)" % (name, serial))
    extra_info = {}
    if k.get("ima"):
        for e in ima["errors"]:
            log("%s: %s" % (name, e))
        recs, view = ima_kernel_view(ima, cases, ima_list_order(flags))
        rows = ima_rows(cases, descs, results, logs, pred, view)
        rows.append(ima_replay_row(modsign, work, ima, recs))
        rows.append(ima_policy_row(ima, recs, k["measures_policy_writes"]))
        extra_info = {"policy": ima["policy"], "records": len(recs)}
    else:
        rows = plain_rows(cases, descs, results, logs, pred)
    if kx is not None:
        rows += kexec_rows(serial, kx, kpred, KEXEC_DEBUG in cmdline)
    mut = None
    if getattr(args, "mutants", 0):
        mut = run_mutants(*mutant_args)
    gen = None
    if getattr(args, "grammar", 0):
        gen = run_mutants(*mutant_args, generated=generated(c, args.grammar, mutant_args[-1]))
    agree = sum(r["agree"] for r in rows)
    log("%s (%s): %d/%d agree; kernel %.0f s, boot %.0f s" % (name, release, agree, len(rows), t_get, t_boot))
    for r in rows:
        if not r["agree"]:
            log("  DISAGREE %s: kernel %s, modsign %s (%s)" % (r["case"], r["kernel"], r["modsign"], r["reason"]))
    return {"name": name, "title": title, "profile": " ".join([profile] + flags),
            "cmdline": cmdline, "ima": extra_info,
            "release": release, "rows": rows, "keys": keys, "t_kernel": t_get, "t_boot": t_boot,
            "mutants": mut, "generated": gen}


def plain_rows(cases, descs, results, logs, pred):
    """Rows of a kernel without IMA: the load result of each case against verify's prediction."""
    rows = []
    soft = re.compile(r"Loading of (unsigned module|module with unsupported crypto|module with unavailable key) is rejected")
    for fname, _ in cases:
        got = dict(results.get(tag(fname), {"result": "no result", "taint": "", "insmod": ""}))
        want = dict(pred.get(fname, {"result": "no prediction", "errno": None, "reason": ""}))
        # Enforcing kernels name the soft error they refused (ENODATA, ENOPKG, ENOKEY); so
        # does modsign's reason.  Both results then carry it, and must agree on it too.
        m = next((soft.search(line) for line in logs.get(tag(fname), []) if soft.search(line)), None)
        if m:
            got["result"] += " (%s)" % m.group(1)
        m = soft.match(want.get("reason") or "")
        if m:
            want["result"] += " (%s)" % m.group(1)
        rows.append({"case": re.sub(r"\.ko(\.(xz|zst|gz))?$", "", fname), "desc": descs[fname], "kernel": got["result"],
                     "taint": got["taint"], "insmod": got["insmod"], "log": logs.get(tag(fname), []),
                     "modsign": want["result"], "reason": want["reason"],
                     "agree": got["result"] == want["result"]})
    return rows
