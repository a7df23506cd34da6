"""The security.ima size limits and the space signing costs, measured on real file systems in
the IMA kernel (issue 16 §3) against `modsign ima fit` and `modsign ima estimate`.

One boot, no IMA policy.  Per configuration (an image made with mkfs on the host, attached as
a virtio disk): the largest security.ima setxattr accepts on an empty file, without and with
an SELinux-like label (security.selinux), found by binary search in the guest (msc-xattr max);
then statfs before and after setting security.ima of each algorithm's size on N files."""
import json
import os
import shutil
import subprocess

from .common import log
from .files_run import boot_parsed, initramfs, make_disk

# name: (fs type, mkfs command, mount options, fit options of modsign ima fit)
FIT = {
    "ext4-4k": ("ext4", ["mkfs.ext4", "-q", "-F", "-b", "4096", "-I", "256"], "",
                ["--fs", "ext4", "--block-size", "4096", "--inode-size", "256"]),
    "ext4-4k-ea_inode": ("ext4", ["mkfs.ext4", "-q", "-F", "-b", "4096", "-I", "256", "-O", "ea_inode"], "",
                         ["--fs", "ext4", "--block-size", "4096", "--inode-size", "256", "--ea-inode"]),
    "ext4-1k": ("ext4", ["mkfs.ext4", "-q", "-F", "-b", "1024", "-I", "256"], "",
                ["--fs", "ext4", "--block-size", "1024", "--inode-size", "256"]),
    "ext4-1k-ea_inode": ("ext4", ["mkfs.ext4", "-q", "-F", "-b", "1024", "-I", "256", "-O", "ea_inode"], "",
                         ["--fs", "ext4", "--block-size", "1024", "--inode-size", "256", "--ea-inode"]),
    "ext4-4k-512": ("ext4", ["mkfs.ext4", "-q", "-F", "-b", "4096", "-I", "512"], "",
                    ["--fs", "ext4", "--block-size", "4096", "--inode-size", "512"]),
    "xfs": ("xfs", ["mkfs.xfs", "-q", "-f"], "", ["--fs", "xfs"]),
    "btrfs-16k": ("btrfs", ["mkfs.btrfs", "-q", "-f", "-n", "16384"], "", ["--fs", "btrfs", "--node-size", "16384"]),
    "btrfs-4k": ("btrfs", ["mkfs.btrfs", "-q", "-f", "-n", "4096"], "", ["--fs", "btrfs", "--node-size", "4096"]),
    "f2fs": ("f2fs", ["mkfs.f2fs", "-q", "-f"], "", ["--fs", "f2fs"]),
    "f2fs-inline256": ("f2fs", ["mkfs.f2fs", "-q", "-f", "-O", "extra_attr,flexible_inline_xattr"],
                       "inline_xattr_size=256", ["--fs", "f2fs", "--inline-xattr-size", "256"]),
}
LABEL = b"system_u:object_r:usr_t:s0\0"   # 27 bytes, as SELinux stores it
PREFIX = "030304" + "00000000" + "0000"     # a v3 signature_v2_hdr with SHA-256 (setxattr checks the algorithm)
ALGS = {"ecdsa-p384": 113, "ml-dsa-44": 2429, "ml-dsa-65": 3318, "ml-dsa-87": 4636}
OVERHEAD = ["ext4-4k", "ext4-4k-ea_inode", "ext4-1k-ea_inode", "xfs", "btrfs-16k", "f2fs"]
NFILES, MAXSIZE = 2000, 4096


def fit_script():
    L = []
    for name in FIT:
        d = "/mnt/" + name
        L += [": > %s/probe" % d, ": > %s/probe-label" % d,
              "/bin/msc-xattr set %s/probe-label security.selinux %s >/dev/null" % (d, LABEL.hex()),
              'echo "MSC-FIT %s/plain $(/bin/msc-xattr max %s/probe security.ima %s)"' % (name, d, PREFIX),
              'echo "MSC-FIT %s/label $(/bin/msc-xattr max %s/probe-label security.ima %s)"' % (name, d, PREFIX)]
    for name in OVERHEAD:
        d = "/mnt/" + name
        for i, (alg, size) in enumerate(ALGS.items()):
            L += ["mkdir %s/%s" % (d, alg), "/bin/msc-xattr fill %s/%s %d %d %d >/dev/null" % (d, alg, NFILES, MAXSIZE, i + 1),
                  'echo "MSC-STAT %s/%s/before $(/bin/msc-xattr statfs %s)"' % (name, alg, d),
                  'echo "MSC-STAT %s/%s/sign $(/bin/msc-xattr sign %s/%s %d %d %d)"' % (name, alg, d, alg, NFILES, size, i + 7),
                  'echo "MSC-STAT %s/%s/after $(/bin/msc-xattr statfs %s)"' % (name, alg, d)]
    return "\n".join(L) + "\n"


def kvs(line):
    return dict(w.split("=", 1) for w in (line or "").split() if "=" in w)


def modsign_json(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        return json.loads(p.stdout.decode().splitlines()[0]), ""
    except (IndexError, ValueError):
        return None, "exit %d: %s" % (p.returncode, p.stderr.decode(errors="replace").strip()[-200:])


def host_tree(work, n=NFILES, maxsize=MAXSIZE):
    """The files msc-xattr fill makes (sizes only matter to the estimate): f<i> of
    (i*7919 % maxsize)+1 bytes."""
    d = os.path.join(work, "tree")
    if not os.path.isdir(d):
        os.makedirs(d)
        for i in range(n):
            with open(os.path.join(d, "f%d" % i), "wb") as f:
                f.truncate(i * 7919 % maxsize + 1)
    return d


def run_fit(kernel, args, modsign, openssl):
    work = os.path.join(args.workdir, "mldsa-ima-xattr")
    if not os.environ.get("MODSIGN_CONF_REUSE"):
        shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work, exist_ok=True)
    disks, drives = "", []
    for j, (name, (fs, mkfs, opts, _)) in enumerate(FIT.items()):
        img = os.path.join(work, name + ".img")
        make_disk(img, mkfs, 512)
        drives.append(img)
        disks += "vd%s %s %s\n" % (chr(ord("a") + j), name, opts)
    # /init mounts "name" with type name up to the first '-'
    entries = [("etc/disks", 0o100644, disks.encode(), 0, 0), ("etc/fit", 0o100644, fit_script().encode(), 0, 0),
               ("files/list", 0o100644, b"", 0, 0), ("files/xattrs", 0o100644, b"", 0, 0),
               ("etc/action", 0o100644, b"open", 0, 0)]
    initrd = os.path.join(work, "initramfs.cpio")
    initramfs(initrd, work, entries, kernel)
    serial = os.path.join(work, "serial.log")
    g = boot_parsed(kernel, initrd, serial, max(args.timeout, 3600), "rootfstype=ramfs no_timer_check", drives)
    for img in drives:
        if os.path.exists(img):
            os.unlink(img)
    if not g["done"]:
        log("mldsa-ima-xattr: /init did not finish (see %s)" % serial)
    rows = []
    tree = host_tree(work)
    for name, (fs, _, _, fitopts) in FIT.items():
        for var in ("plain", "label"):
            got = kvs(g["fit"].get("%s/%s" % (name, var)))
            k = "max %s (%s at %s)" % (got.get("max", "?"), got.get("errno", "?"), got.get("refused", "?")) \
                if got.get("confirmed") == "1" else "unconfirmed: %s" % g["fit"].get("%s/%s" % (name, var))
            cmd = [modsign, "ima", "fit", "--json"] + fitopts + (["--xattr", "security.selinux=%d" % len(LABEL)] if var == "label" else [])
            p, err = modsign_json(cmd)
            m = "max %s (%s at %s)" % (p["max_security_ima"], p["errno"], p["max_security_ima"] + 1) if p else "no prediction"
            fits = ", ".join(a for a, ok in sorted((p or {}).get("fits", {}).items()) if ok)
            rows.append({"case": "fit %s %s" % (name, var), "kind": "fit", "config": name, "variant": var,
                         "desc": "largest security.ima on an empty file%s" % (", security.selinux of 27 bytes" if var == "label" else ""),
                         "kernel": k, "modsign": m, "agree": k == m, "log": [], "taint": "", "insmod": "",
                         "reason": ("fits: " + fits if p else err), "fits": (p or {}).get("fits")})
    for name in OVERHEAD:
        for alg, size in ALGS.items():
            before, after = kvs(g["stat"].get("%s/%s/before" % (name, alg))), kvs(g["stat"].get("%s/%s/after" % (name, alg)))
            sign = g["stat"].get("%s/%s/sign" % (name, alg), "?")
            if before and after and sign.startswith("OK"):
                used = (int(before["bfree"]) - int(after["bfree"])) * int(after["frsize"])
                k = "%d bytes (%d per file)" % (used, used // NFILES)
            else:
                used, k = None, "setxattr %s" % (sign.split()[1] if len(sign.split()) > 1 else sign)
            fitopts = FIT[name][3]
            p, err = modsign_json([modsign, "ima", "estimate", "--json", "-r", tree, "--alg", alg] + fitopts)
            if p is None:
                m = "no prediction"
            elif not p.get("fits", True):
                m = "setxattr %s" % p.get("errno")
            else:
                m = "%d bytes (%d per file)" % (p["extra_bytes"], p["extra_bytes"] // NFILES)
            agree = k == m
            if p is not None and p.get("lower_bound") and used is not None:
                # btrfs: the estimate is the item bytes (DUP), a lower bound of what the leaves take
                m = "at least " + m
                agree = used >= p["extra_bytes"]
            rows.append({"case": "overhead %s %s" % (name, alg), "kind": "overhead", "config": name, "alg": alg,
                         "desc": "statfs before/after security.ima of %d bytes on %d files" % (size, NFILES),
                         "kernel": k, "modsign": m, "agree": agree, "measured": used,
                         "predicted": (p or {}).get("extra_bytes"), "naive": size * NFILES, "log": [], "taint": "",
                         "insmod": "", "reason": err or ("naive files x size: %d" % (size * NFILES))})
    boots = [{"policy": "none", "release": g["release"], "mounts": g["mounts"], "addkey": [], "policy_lines": [],
              "keys": []}]
    return rows, boots, g["t_boot"]
