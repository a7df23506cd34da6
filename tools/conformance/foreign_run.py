"""A Debian kernel of another architecture under qemu-system (TCG): kernel "debsid-s390x" is
Debian unstable's s390x kernel (Linux 7.2.13, big-endian), "debsid-arm64" its arm64 kernel
(little-endian), both CONFIG_IMA=y with the ima-sig template, fetched with their busybox by
tools/fetch-debian-foreign, the guest helper built by Debian's cross compiler.

Two boots, ima_canonical_fmt off and on.  /init writes the policy "measure func=MODULE_CHECK"
and loads each case with finit_module (tests/kernel/finit.c; -c for the .ko.xz).  Rows:
  - per case and boot, the ima-sig record of the case (SHA-1 template hash, template data
    bytes) against `modsign ima template --kernel-arch ARCH [--ima-canonical-fmt]`: the
    lengths IMA hashes are in the kernel's own order without the parameter (big-endian on
    s390x), little-endian with it;
  - per boot, `modsign ima replay` of the whole list (the boot_aggregate record included):
    every template hash recomputed, and the byte order it reads off the list;
  - per module case that does not need Debian's built-in key (unsigned, signed by a key the
    kernel lacks, a damaged signature), the load result against `modsign verify` (the first
    boot's; Debian's built-in certificate is not extracted from these images)."""
import json
import lzma
import os
import shutil
import subprocess
import time

from .common import HERE, KEYS, die, find_module, run
from .predict import ima_list_order, ima_records, predict
from .qemu import boot, finit_entry, make_initramfs, parse_serial, tag

POLICY = "measure func=MODULE_CHECK\n"
# The kernel's configuration (its lib/modules/<kver>/config): no CONFIG_CRYPTO_MLDSA, no SM3,
# CONFIG_CRYPTO_STREEBOG=m, CONFIG_MODULE_COMPRESS_XZ with CONFIG_MODULE_DECOMPRESS.
FLAGS = ["--module-decompress", "xz", "--kernel-lacks", "mldsa", "--kernel-lacks", "sm3"]


def foreign_kernel(suite, arch):
    p = subprocess.run([os.path.join(HERE, "tools", "fetch-debian-foreign"), "--suite", suite, arch],
                       stdout=subprocess.PIPE)
    if p.returncode == 77:
        die("fetch-debian-foreign %s %s: skipped" % (suite, arch), 77)
    if p.returncode != 0:
        die("fetch-debian-foreign %s %s failed" % (suite, arch))
    e = dict(line.split("=", 1) for line in p.stdout.decode().splitlines() if "=" in line)
    mod = find_module(os.path.join(e["MODULES"], "lib", "modules", e["KVER"]), "nls_iso8859-1.ko.xz")
    return {"vmlinuz": e["VMLINUZ"], "kver": e["KVER"], "module": mod, "modname": "nls_iso8859_1",
            "busybox": e["BUSYBOX"], "config": e["CONFIG"], "arch": arch}


def cases(modsign, k, work):
    """(file name, description, bytes, verdict row?) of the cases."""
    with open(k["module"], "rb") as f:
        shipped = f.read()
    plain = lzma.decompress(shipped)
    d = os.path.join(work, "make")
    os.makedirs(d, exist_ok=True)
    base = os.path.join(d, "plain.ko")
    with open(base, "wb") as f:
        f.write(plain)
    run([modsign, "strip", "--dest", os.path.join(d, "unsigned.ko"), base])

    def signed(key, *extra):
        out = os.path.join(d, key + ".ko")
        run([modsign, "sign", "--key", os.path.join(KEYS, key + ".key.pem"), "--cert",
             os.path.join(KEYS, key + ".cert.pem"), "--dest", out] + list(extra) + [os.path.join(d, "unsigned.ko")])
        with open(out, "rb") as f:
            return f.read()
    with open(os.path.join(d, "unsigned.ko"), "rb") as f:
        unsigned = f.read()
    rsa = signed("rsa", "--hash", "sha256")
    # struct module_signature's sig_len (big-endian, before the 28-byte marker) past the file.
    damaged = bytearray(rsa)
    damaged[-28 - 4:-28] = (len(rsa) + 1000).to_bytes(4, "big")
    return [
        ("01-shipped.ko.xz", "Debian's module as shipped (xz), loaded with MODULE_INIT_COMPRESSED_FILE", shipped, False),
        ("02-shipped.ko", "the same, decompressed on the host (Debian's signature)", plain, False),
        ("03-unsigned.ko", "its signature stripped", unsigned, True),
        ("04-mldsa65.ko", "signed with the test ML-DSA-65 key (the kernel has no CONFIG_CRYPTO_MLDSA nor the key)",
         signed("mldsa65"), True),
        ("05-rsa.ko", "signed with the test RSA key, sha256, no signedAttrs (a key the kernel lacks)", rsa, True),
        ("06-rsa-signed-attrs.ko", "the same with signedAttrs (sign-file on OpenSSL 3.x)",
         signed("rsa", "--hash", "sha256", "--signed-attrs"), True),
        ("07-damaged trailer.ko", "05 with module_signature's big-endian sig_len past the file (a name with a blank: "
         "n-ng '_')", bytes(damaged), True),
    ]


def template_prediction(modsign, path, fname, arch, canonical):
    cmd = [modsign, "ima", "template", "--json", "--template", "ima-sig", "--kernel", "v7.2", "--kernel-arch", arch,
           "--path", "/cases/" + fname] + (["--ima-canonical-fmt"] if canonical else []) + [path]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        return None, "exit %d: %s" % (p.returncode, p.stderr.decode(errors="replace").strip())
    return json.loads(p.stdout), ""


def replay_row(modsign, bdir, lst, order, canonical, recs):
    """`order`: the list's byte order (ima_list_order)."""
    path = os.path.join(bdir, "binary_runtime_measurements")
    with open(path, "wb") as f:
        f.write(lst)
    p = subprocess.run([modsign, "ima", "replay", "--json", "--bank", "sha1", path], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    want = order + "-endian"
    try:
        j = json.loads(p.stdout)
        got = "%d records, %d template hash mismatches, %s" % (j["records"], len(j["template_hash_mismatches"]),
                                                               j["byte_order"])
        ok = p.returncode == 0 and j["records"] == len(recs) and j["byte_order"] == want and len(recs) > 1
    except (ValueError, KeyError):
        got, ok = "exit %d: %s" % (p.returncode, p.stderr.decode(errors="replace")[-200:]), False
    return {"case": "replay" + ("-canonical" if canonical else ""),
            "desc": "`modsign ima replay` of the whole list (boot_aggregate included), order read off the list",
            "kernel": "%d records, %s list" % (len(recs), want), "taint": "", "insmod": "", "log": [],
            "modsign": got, "reason": "", "agree": ok}


def run_foreign(k, args, modsign, openssl):
    """Both boots; returns (rows, boots, boot time) as files_run.run_files does."""
    work = os.path.join(args.workdir, "debsid-" + k["arch"])
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    defs = cases(modsign, k, work)
    paths = {}
    for fname, _, data, _ in defs:
        paths[fname] = os.path.join(work, fname)
        with open(paths[fname], "wb") as f:
            f.write(data)
    verdicts = predict(modsign, "v7.0", FLAGS, [os.path.join(KEYS, "ecdsa.cert.pem")],
                       [paths[f] for f, _, _, v in defs if v])
    extra = [finit_entry(work, k["arch"]), ("etc", 0o40755, b"", 0, 0),
             ("etc/ima-policy", 0o100644, POLICY.encode(), 0, 0)]
    rows, boots, t_boot = [], [], 0.0
    for canonical in (False, True):
        bdir = os.path.join(work, "canonical" if canonical else "native")
        os.makedirs(bdir)
        initrd = os.path.join(bdir, "initramfs.cpio")
        make_initramfs(initrd, [(f, d) for f, _, d, _ in defs], k["modname"], extra, busybox=k["busybox"])
        serial = os.path.join(bdir, "serial.log")
        cmdline = "ima_hash=sha256" + (" ima_canonical_fmt" if canonical else "")
        t0 = time.time()
        t_boot += boot(k["vmlinuz"], initrd, serial, args.timeout, cmdline, arch=k["arch"])
        results, logs, _, release, done, ima = parse_serial(serial)
        boots.append({"cmdline": cmdline, "release": release, "done": done, "seconds": round(time.time() - t0)})
        lst = ima["list"] or b""
        order = ima_list_order(["--kernel-arch", k["arch"]] + (["--ima-canonical-fmt"] if canonical else []))
        recs = ima_records(lst, order)
        suffix = " (ima_canonical_fmt)" if canonical else ""
        for fname, desc, _, verdict in defs:
            name = ("/cases/" + fname).replace(" ", "_").encode() + b"\0"
            rec = next((r for r in recs if r["name"] == "ima-sig" and len(r["fields"]) > 1 and r["fields"][1] == name), None)
            pred, why = template_prediction(modsign, paths[fname], fname, k["arch"], canonical)
            kern = "no record" if rec is None else "sha1 %s" % rec["digest"].hex()
            mine = "no record (%s)" % why if pred is None else "sha1 %s" % pred["template_hash_sha1"]
            agree = rec is not None and pred is not None and rec["data"].hex() == pred["template_data"] and \
                rec["digest"].hex() == pred["template_hash_sha1"]
            rows.append({"case": "ima-" + fname.rsplit(".ko", 1)[0].replace(" ", "_") + ("-canonical" if canonical else ""),
                         "desc": "ima-sig record" + suffix + ": " + desc, "kernel": kern, "taint": "", "insmod": "",
                         "log": [], "modsign": mine, "reason": "", "agree": agree})
            if verdict and not canonical:
                got = results.get(tag(fname), {"result": "no result", "taint": "", "insmod": ""})
                want = verdicts.get(fname, {"result": "no prediction", "reason": ""})
                rows.append({"case": fname.rsplit(".ko", 1)[0].replace(" ", "_"), "desc": desc,
                             "kernel": got["result"], "taint": got["taint"], "insmod": got["insmod"],
                             "log": logs.get(tag(fname), []), "modsign": want["result"],
                             "reason": want["reason"], "agree": got["result"] == want["result"]})
        rows.append(replay_row(modsign, bdir, lst, order, canonical, recs))
    return rows, boots, t_boot
