"""Running the file-signature boots of the IMA kernel (issue 16 §2): disks made on the host
with mkfs, one boot per IMA policy, the kernel's open/exec result and ima-sig record per file
against `modsign ima verify --json` and `modsign ima template --template ima-sig`.

The same boots on the IMA kernel built for big-endian s390x (kernel mldsa-ima-files-s390x):
Debian's s390x busybox, the guest helpers (and the BPRM_CHECK executable) cross-built, the disks
made by the same mkfs on the host, and the records in the kernel's own byte order
(`modsign ima template --kernel-arch s390x`); ima_canonical_fmt is the module kernels' matter
(mldsa-ima-s390x-canonical), not repeated here."""
import json
import os
import re
import shutil
import subprocess
import time

from .common import HERE, die, log, run, static_helper
from .cases_ima_files import (FILES_INIT, FILESYSTEMS, IMA_KEYS, POLICIES, RULE_FUNCS, RULE_PROBE_BOOT, RULE_TYPES,
                              TEMPLATES, Signer, file_cases)
from .predict import ima_records
from .qemu import boot, cpio_newc, serial_lines

# name: (mkfs command after the image path is appended, mount options)
DISKS = {
    "ext4": (["mkfs.ext4", "-q", "-F", "-b", "4096", "-I", "256"], ""),
    "ext4-ea_inode": (["mkfs.ext4", "-q", "-F", "-b", "4096", "-I", "256", "-O", "ea_inode"], ""),
    "xfs": (["mkfs.xfs", "-q", "-f"], ""),
    "btrfs": (["mkfs.btrfs", "-q", "-f"], ""),
    "f2fs": (["mkfs.f2fs", "-q", "-f"], ""),
}
# The profile both predictions name (--kernel, the same release in every `modsign ima`
# command): the IMA conformance kernel is 7.2.13.
KERNEL_PROFILE = "v7.2"
MKFS_TOOLS = {"mkfs.ext4": "e2fsprogs", "mkfs.xfs": "xfsprogs", "mkfs.btrfs": "btrfs-progs", "mkfs.f2fs": "f2fs-tools"}
# Each tool's label option: the boots find a disk by its label (/init: findfs LABEL=...).
MKFS_LABEL = {"mkfs.ext4": "-L", "mkfs.xfs": "-L", "mkfs.btrfs": "-L", "mkfs.f2fs": "-l"}


def make_disk(path, cmd, size_mb=512):
    tool = cmd[0]
    if not shutil.which(tool) and not os.path.exists("/sbin/" + tool):
        die("%s not found (apt-get install %s)" % (tool, MKFS_TOOLS[tool]), 77)
    if os.path.exists(path):
        os.unlink(path)
    with open(path, "wb") as f:
        f.truncate(size_mb << 20)
    run([shutil.which(tool) or "/sbin/" + tool] + cmd[1:] + [path])


def initramfs(path, work, entries, kernel):
    """The cpio of one boot: busybox (the host's, or Debian's of the kernel's architecture),
    /init, msc-xattr and `entries`."""
    arch = kernel.get("arch")
    busybox = kernel.get("busybox") or shutil.which("busybox") or "/bin/busybox"
    with open(busybox, "rb") as f:
        bb = f.read()
    base = [("bin", 0o40755, b"", 0, 0), ("dev", 0o40755, b"", 0, 0), ("dev/console", 0o20600, b"", 5, 1),
            ("proc", 0o40755, b"", 0, 0), ("sys", 0o40755, b"", 0, 0), ("mnt", 0o40755, b"", 0, 0),
            ("tmp", 0o40755, b"", 0, 0), ("etc", 0o40755, b"", 0, 0), ("keys", 0o40755, b"", 0, 0),
            ("files", 0o40755, b"", 0, 0), ("bin/busybox", 0o100755, bb, 0, 0),
            ("init", 0o100755, FILES_INIT.encode(), 0, 0),
            ("bin/msc-xattr", 0o100755, static_helper(work, "msc-xattr", "xattr.c", arch), 0, 0)]
    with open(path, "wb") as f:
        f.write(cpio_newc(base + entries))


def parse(path):
    """Lines of a files boot: {"files": {tag: line}, "setx": {path: line}, "logs": {tag: [..]},
    "sizes": [(tag, n)], "list": bytes, "mounts", "addkey", "keys", "policy", "fit", "stat",
    "rules": {rule: "0" or errno name}}."""
    out = {"files": {}, "setx": {}, "logs": {}, "sizes": [], "list": b"", "mounts": {}, "addkey": [],
           "keys": [], "policy": [], "fit": {}, "stat": {}, "rules": {}, "release": None, "done": False, "errors": []}
    lines, blob = serial_lines(path)
    if blob is not None:
        out["list"] = blob
    for line in lines:
        w = line.split(" ", 2)
        k = w[0]
        if k == "MSC-BOOT":
            out["release"] = line[9:].strip()
        elif k == "MSC-DONE":
            out["done"] = True
        elif k == "MSC-FILE" and len(w) == 3:
            out["files"][w[1]] = w[2]
        elif k == "MSC-SETX" and len(w) == 3:
            out["setx"][w[2].split()[-1]] = line[9:]  # "OK SIZE PATH" or "ERR ERRNO PATH"
        elif k == "MSC-LOG" and len(w) == 3:
            out["logs"].setdefault(w[1], []).append(re.sub(r"^<\d+>", "", w[2]))
        elif k == "MSC-IMA-SIZE" and len(w) == 3:
            out["sizes"].append((w[1], int(w[2])))
        elif k == "MSC-MOUNT" and len(w) == 3:
            out["mounts"][w[1]] = w[2]
        elif k == "MSC-ADDKEY":
            out["addkey"].append(line[11:])
        elif k == "MSC-KEY":
            out["keys"].append(line[8:])
        elif k == "MSC-POLICY":
            out["policy"].append(line[11:])
        elif k == "MSC-ERROR":
            out["errors"].append(line[10:])
        elif k == "MSC-RULE" and len(w) == 3:  # "MSC-RULE OK <rule>" or "MSC-RULE ERR <errno> <rule>"
            if w[1] == "OK":
                out["rules"][w[2]] = "0"
            elif " " in w[2]:
                errno_name, rule = w[2].split(" ", 1)
                out["rules"][rule] = errno_name
        elif k == "MSC-FIT" and len(w) == 3:
            out["fit"][w[1]] = w[2]
        elif k == "MSC-STAT" and len(w) == 3:
            out["stat"][w[1]] = w[2]
    return out


def boot_parsed(kernel, initrd, serial, timeout, cmdline, drives):
    """boot() and parse(); booted again (up to twice) when the kernel did not reach /init, as
    TCG under load sometimes fails the timer check ("IO-APIC + timer doesn't work"; the boots
    also pass no_timer_check, which skips it)."""
    t = 0.0
    if os.environ.get("MODSIGN_CONF_REUSE") and os.path.exists(serial):
        g = parse(serial)
        if g["done"]:  # MODSIGN_CONF_REUSE=1: predictions again on the last boot's log
            g["t_boot"] = 0.0
            return g
    for attempt in range(3):
        t += boot(kernel["vmlinuz"], initrd, serial, timeout, cmdline, drives=drives, arch=kernel.get("arch", "x86_64"))
        g = parse(serial)
        if g["release"] is not None:
            break
        log("%s: the kernel did not reach /init, booting again" % serial)
    g["t_boot"] = t
    return g


def kernel_result(line):
    """'0' or the errno name from a msc-xattr open/exec line."""
    if line is None:
        return "no result"
    if line.startswith("OK"):
        return "0"
    m = re.match(r"ERR (\S+)", line)
    return m.group(1) if m else "?(%s)" % line


def verify_json(modsign, path, xattr, appraise_type, certs, func):
    """`modsign ima verify --json` for one file with its security.ima (None: no xattr)."""
    cmd = [modsign, "ima", "verify", "--json", "--kernel", KERNEL_PROFILE, "--appraise-type", appraise_type, "--func", func]
    for c in certs:
        cmd += ["--keyring", c]
    if xattr is not None:
        cmd += ["--xattr-hex", xattr.hex()]
    p = subprocess.run(cmd + [path], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        return json.loads(p.stdout.decode().splitlines()[0]), ""
    except (IndexError, ValueError):
        if p.returncode == 0 and not p.stdout.strip():
            # ima-sign 132ec85 prints no JSON for a passing file (--json turns on the batch's
            # quiet mode); its exit status 0 says every appraise type passed.
            return {"open": "0", "cause": None, "digsig_errno": None, "key": "exit 0, no JSON printed"}, ""
        return None, "exit %d: %s" % (p.returncode, p.stderr.decode(errors="replace").strip()[-300:])


def template_json(modsign, path, guest_path, xattr, template, arch=None):
    cmd = [modsign, "ima", "template", "--json", "--kernel", KERNEL_PROFILE, "--template", template,
           "--path", guest_path] + (["--kernel-arch", arch] if arch else [])
    if xattr is not None:
        cmd += ["--security-ima", xattr.hex()]
    p = subprocess.run(cmd + [path], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        return json.loads(p.stdout), ""
    except ValueError:
        return None, "exit %d: %s" % (p.returncode, p.stderr.decode(errors="replace").strip()[-300:])


def run_files(kernel, args, modsign, openssl):
    """All boots of the file cases (one per POLICIES entry); returns rows as run_kernel does."""
    arch = kernel.get("arch")
    name = "mldsa-ima-files" + ("-" + arch if arch else "")
    work = os.path.join(args.workdir, name)
    if not os.environ.get("MODSIGN_CONF_REUSE"):
        shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work, exist_ok=True)
    s = Signer(openssl, work)
    certs = [s.cert(k) for k in IMA_KEYS]
    exe = static_helper(work, "msc-xattr", "xattr.c", arch)
    rows, boots, t_boot = [], [], 0.0
    for pname, (func, policy, atype) in POLICIES.items():
        bdir = os.path.join(work, pname)
        os.makedirs(os.path.join(bdir, "files"), exist_ok=True)
        saved = os.path.join(bdir, "cases.json")
        if os.environ.get("MODSIGN_CONF_REUSE") and os.path.exists(saved):
            with open(saved) as f:
                cases = [(n, d, bytes.fromhex(c), bytes.fromhex(x) if x is not None else None) for n, d, c, x in json.load(f)]
        else:
            cases = file_cases(s, exe if func == "BPRM_CHECK" else None)
            with open(saved, "w") as f:
                json.dump([(n, d, c.hex(), x.hex() if x is not None else None) for n, d, c, x in cases], f)
        entries, lst, xat, meta = [], "", "", []
        for i, (cname, desc, data, x) in enumerate(cases, 1):
            fname = "%02d-%s" % (i, cname)
            with open(os.path.join(bdir, "files", fname), "wb") as f:
                f.write(data)
            entries.append(("files/" + fname, 0o100755, data, 0, 0))
            for fs in FILESYSTEMS:
                lst += "%s %s\n" % (fs, fname)
                if x is not None:
                    xat += "/mnt/%s/%s security.ima %s\n" % (fs, fname, x.hex())
                meta.append((fs, fname, desc, x))
        entries += [("files/list", 0o100644, lst.encode(), 0, 0), ("files/xattrs", 0o100644, xat.encode(), 0, 0),
                    ("etc/ima-policy", 0o100644, policy.encode(), 0, 0),
                    ("etc/action", 0o100644, (b"exec" if func == "BPRM_CHECK" else b"open"), 0, 0),
                    ("etc/keys", 0o40755, b"", 0, 0), ("etc/keys/x509_ima.der", 0o100644, s.der("mldsa65"), 0, 0)]
        entries += [("keys/%s.der" % k, 0o100644, s.der(k), 0, 0) for k in IMA_KEYS if k != "mldsa65"]
        disks, drives = "", []
        for fs in [f for f in FILESYSTEMS if f != "tmpfs"]:
            img = os.path.join(bdir, fs + ".img")
            cmd = DISKS[fs][0]
            make_disk(img, cmd[:1] + [MKFS_LABEL[cmd[0]], fs] + cmd[1:])
            drives.append(img)
            disks += "LABEL=%s %s %s\n" % (fs, fs, DISKS[fs][1])
        entries.append(("etc/disks", 0o100644, disks.encode(), 0, 0))
        if pname == RULE_PROBE_BOOT:
            entries.append(("etc/rule-probe", 0o100644, "".join(r + "\n" for r in probe_rules()).encode(), 0, 0))
        initrd = os.path.join(bdir, "initramfs.cpio")
        initramfs(initrd, work, entries, kernel)
        serial = os.path.join(bdir, "serial.log")
        template = TEMPLATES.get(pname, "ima-sig")
        cmdline = "rootfstype=ramfs %sima_template=%s" % ("" if arch else "no_timer_check ", template)  # x86's timer check
        g = boot_parsed(kernel, initrd, serial, args.timeout, cmdline, drives)
        t_boot += g["t_boot"]
        for e in g["errors"]:
            log("%s %s: %s" % (name, pname, e))
        if not g["done"]:
            log("%s %s: /init did not finish (see %s)" % (name, pname, serial))
        for img in drives:
            if os.path.exists(img):
                os.unlink(img)
        rows += files_rows(modsign, bdir, pname, atype, certs, meta, g, template, func, arch)
        if pname == RULE_PROBE_BOOT:
            rows += rule_rows(modsign, os.path.join(bdir, "files", "%02d-%s" % (1, cases[0][0])), g["rules"])
        boots.append({"policy": pname, "release": g["release"], "mounts": g["mounts"], "addkey": g["addkey"],
                      "policy_lines": g["policy"], "keys": g["keys"]})
    return rows, boots, t_boot


def probe_rules():
    return ["appraise func=%s appraise_type=%s" % (f, t) for f in RULE_FUNCS for t in RULE_TYPES]


def rule_rows(modsign, path, got):
    """Rows of the policy-rule probe: the kernel's write(2) result for each rule against
    `modsign ima verify --func F --appraise-type T`'s policy_errno (any file: the rule is
    judged before the file)."""
    pred = {}
    for f in RULE_FUNCS:
        cmd = [modsign, "ima", "verify", "--kernel", KERNEL_PROFILE, "--json", "--func", f]
        for t in RULE_TYPES:
            cmd += ["--appraise-type", t]
        p = subprocess.run(cmd + [path], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for j in map(json.loads, p.stdout.decode().splitlines()):
            pred["appraise func=%s appraise_type=%s" % (f, j["appraise_type"])] = j
    rows = []
    for rule in probe_rules():
        k = got.get(rule, "no result")
        j = pred.get(rule)
        m = "no prediction" if j is None else (j["policy_errno"] or "0")
        rows.append({"case": "rule " + rule, "desc": "written alone to the IMA policy file", "kernel": k, "taint": "",
                     "insmod": "", "log": [], "modsign": m, "reason": j["reason"] if j and j["policy_errno"] else "",
                     "agree": k == m})
    return rows


def files_rows(modsign, bdir, pname, atype, certs, meta, g, template, func, arch=None):
    recs = ima_records(g["list"], "big" if arch == "s390x" else "little")
    ends, prev, rows = dict(g["sizes"]), 0, []
    for fs, fname, desc, x in meta:
        t = "%s/%s" % (fs, fname)
        gpath = "/mnt/%s/%s" % (fs, fname)
        end = ends.get(t, prev)
        mine = [r for r in recs if r["start"] >= prev and r["end"] <= end]
        prev = end
        rec = next((r for r in mine if len(r["fields"]) > 1 and r["fields"][1] == gpath.encode() + b"\0"), None)
        setx = g["setx"].get(gpath)
        held = x if (x is not None and setx is not None and setx.startswith("OK")) else None
        k = "%s; %s" % (kernel_result(g["files"].get(t)), "measured sha1:%s" % rec["digest"].hex()[:12] if rec else "not measured")
        if x is not None and held is None:
            k = "setxattr %s; %s" % ((setx or "?").split()[1] if setx else "?", k)
        local = os.path.join(bdir, "files", fname)
        v, verr = verify_json(modsign, local, held, atype, certs, func)
        tm, terr = template_json(modsign, local, gpath, held, template, arch)
        if v is None:
            m = "no prediction"
        else:
            m = "%s; %s" % (v.get("open"), "measured sha1:%s" % tm["template_hash_sha1"][:12] if tm else "no record")
            if x is not None and held is None:
                k_set = k.split(";")[0]
                m = "%s; %s" % (k_set, m)  # the guest's setxattr result is an input, not a prediction
        same = v is not None and tm is not None and k == m and rec is not None and rec["data"].hex() == tm["template_data"]
        reason = ""
        if v is not None:
            reason = "cause %s, digsig %s, %s" % (v.get("cause"), v.get("digsig_errno"), v.get("key") or v.get("algorithm"))
        reason += " " + verr + " " + terr
        if rec is not None and tm is not None and rec["data"].hex() != tm["template_data"]:
            reason += " template data differ: kernel %s modsign %s" % (rec["data"].hex()[:400], tm["template_data"][:400])
        rows.append({"case": "%s %s" % (pname, t), "desc": desc + ("" if held is not None or x is None else
                     " (the file system refused the xattr)"), "kernel": k, "taint": "", "insmod": g["files"].get(t, ""),
                     "log": g["logs"].get(t, []), "modsign": m, "reason": reason.strip(), "agree": same,
                     "xattr_len": len(x) if x is not None else 0})
    return rows
