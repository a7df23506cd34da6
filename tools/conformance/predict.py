"""What modsign predicts: `modsign verify --json` per case, and for the IMA kernel
`modsign ima appraise`, the measurement records and `modsign ima replay`."""
import hashlib
import json
import os
import re
import subprocess

from .common import KEYS, run
from .cases_ima import IMA_CERT, IMA_POLICY, IMA_POLICY_PROBE
from .qemu import finit_entry, tag


def supports_blacklist(modsign):
    """True if this modsign's verify takes --blacklist (a CONFIG_SYSTEM_BLACKLIST_HASH_LIST file)."""
    h = subprocess.run([modsign, "verify", "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return b"--blacklist" in h.stdout


def predict(modsign, profile, flags, keyring, paths, blacklist=None):
    """modsign verify --json on paths: {basename: {result, errno, reason}}.  keyring is a list
    of certificate files; blacklist, if given, a (hash-list file, [certificates it bars]) pair:
    with --blacklist support the file is passed and every certificate stays in the keyring
    (modsign refuses the barred ones as x509_key_preparse does), otherwise the barred
    certificates are left out of the keyring, which is what the kernel's keyring holds."""
    cmd = [modsign, "verify", "--kernel", profile, "--json"]
    if blacklist:
        if supports_blacklist(modsign):
            cmd += ["--blacklist", blacklist[0]]
        else:
            keyring = [k for k in keyring if k not in blacklist[1]]
    cmd += flags
    for k in keyring:
        cmd += ["--keyring", k]
    p = subprocess.run(cmd + paths, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = {}
    for line in p.stdout.decode().splitlines():
        j = json.loads(line)
        o = j["outcome"]
        res = {"loads": "loads", "loads-tainted": "loads-tainted"}.get(o, "refused %s" % j.get("errno"))
        out[os.path.basename(j["path"])] = {"result": res, "errno": j.get("errno"), "reason": j.get("reason")}
    return out


# --- IMA -------------------------------------------------------------------------------------
def ima_records(data, order="little"):
    """The records of a binary_runtime_measurements list (ima_measurements_show in
    security/integrity/ima/ima_fs.c): PCR (u32), SHA-1 template digest (20 bytes), template
    name (u32 length + bytes), template data (u32 length + bytes, itself a sequence of u32
    length + field bytes), every u32 in `order` ("big": a big-endian kernel without
    ima_canonical_fmt).  Each record: start/end offsets, pcr, digest, name, data and fields."""
    out, pos = [], 0
    u32 = lambda p: int.from_bytes(data[p:p + 4], order)  # noqa: E731
    while pos < len(data):
        start = pos
        pcr, digest = u32(pos), data[pos + 4:pos + 24]
        n = u32(pos + 24)
        name = data[pos + 28:pos + 28 + n].decode(errors="replace")
        pos += 28 + n
        ln = u32(pos)
        tdata = data[pos + 4:pos + 4 + ln]
        pos += 4 + ln
        fields, q = [], 0
        while q + 4 <= len(tdata):
            fl = int.from_bytes(tdata[q:q + 4], order)
            fields.append(tdata[q + 4:q + 4 + fl])
            q += 4 + fl
        out.append({"start": start, "end": pos, "pcr": pcr, "digest": digest, "name": name,
                    "data": tdata, "fields": fields})
    return out


def ima_kernel_view(ima, cases, order="little"):
    """Per case file name: (its ima-modsig record or None, [blacklisted-hash records]), from
    the measurement list (its u32 fields in `order`, as ima_records) and the list's size after
    each load (MSC-IMA-SIZE)."""
    recs = ima_records(ima["list"] or b"", order)
    view, prev = {}, 0
    ends = dict(ima["sizes"])
    for fname, _ in cases:
        end = ends.get(tag(fname), prev)
        mine = [r for r in recs if r["start"] >= prev and r["end"] <= end]
        prev = end
        rec = next((r for r in mine if len(r["fields"]) > 1 and r["fields"][1] == ("/cases/" + fname).replace(" ", "_").encode() + b"\0"), None)
        bl = [r for r in mine if len(r["fields"]) > 1 and r["fields"][1] == b"blacklisted-hash\0"]
        view[fname] = (rec, bl)
    return recs, view


def ima_list_order(flags):
    """The byte order of the lengths in a kernel's binary measurement list and template data,
    from its modsign flags: "big" for a big-endian kernel (--byte-order big, or --kernel-arch
    s390x without --byte-order) without --ima-canonical-fmt, else "little"."""
    def value(opt):
        return flags[flags.index(opt) + 1] if opt in flags else None
    order = value("--byte-order") or ("big" if value("--kernel-arch") == "s390x" else "little")
    return "big" if order == "big" and "--ima-canonical-fmt" not in flags else "little"


def ima_predict(modsign, paths, builtin, blacklist, flags=()):
    """modsign's prediction for each case on the IMA kernel, from three modsign commands:
    `ima appraise` with the .ima keyring and the blacklist (ima_check_blacklist, then the
    modsig check of ima_appraise_measurement; any refusal is EACCES), `verify` against the
    built-in keyring (the module loader, which runs only if IMA let the file through), and
    `ima template` (the ima-modsig record).  `flags`: the kernel's --kernel-lacks, given to
    all three."""
    lacks = [f for i, f in enumerate(flags) if f == "--kernel-lacks" or (i and flags[i - 1] == "--kernel-lacks")]
    # The kernel's machine (--kernel-arch: its IMA byte order, s390x big-endian, and the
    # d-modsig overflow's outcome) and --ima-canonical-fmt: only the records (ima
    # template, ima appraise's ima-buf record) depend on them, not verify's verdict.
    order = [f for i, f in enumerate(flags) if f in ("--byte-order", "--kernel-arch", "--ima-canonical-fmt") or
             (i and flags[i - 1] in ("--byte-order", "--kernel-arch"))]
    loader = predict(modsign, "v7.0", lacks, builtin, paths, blacklist)
    p = subprocess.run([modsign, "ima", "appraise", "--json", "--keyring", os.path.join(KEYS, IMA_CERT + ".cert.pem"),
                        "--blacklist", blacklist[0]] + lacks + order + paths, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    ap = {}
    for line in p.stdout.decode().splitlines():
        j = json.loads(line)
        ap[os.path.basename(j["path"])] = j
    out = {}
    for path in paths:
        f = os.path.basename(path)
        t = subprocess.run([modsign, "ima", "template", "--json", "--template", "ima-modsig",
                            "--path", "/cases/" + f] + lacks + order + [path], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
        tmpl = json.loads(t.stdout) if t.returncode == 0 else None
        a = ap.get(f)
        if a is None:
            out[f] = {"load": "no prediction", "reason": p.stderr.decode()[-300:], "template": tmpl,
                      "blacklisted": None, "no_record": None}
            continue
        passes = a["outcome"] == "pass"
        # IMA's refusals are EACCES; an empty file is EINVAL (kernel_read_file, before IMA).
        load = loader[f]["result"] if passes else "refused " + a["errno"]
        if a["cause"] == "empty":
            tmpl = None  # never read, never measured
        reason = loader[f]["reason"] if passes else "IMA %s: %s" % (a["cause"], a["reason"])
        bl = a.get("ima_record")
        if tmpl is None and b"EMSGSIZE: d-modsig" in t.stderr:
            # ima template: the d-modsig field overflows the kernel's stack buffer; the task
            # dies in ima_store_measurement(), before any blacklist check or appraisal.
            load, reason, bl = "oops (process killed)", t.stderr.decode().strip(), None
        out[f] = {"load": load, "reason": reason, "template": tmpl, "blacklisted": bl,
                  "no_record": t.stderr.decode().strip() if tmpl is None else None}
    return out


def ima_rows(cases, descs, results, logs, pred, view):
    """Rows of the IMA kernel.  The measurement list never holds two records with the same
    template hash in one PCR: ima_add_template_entry() (ima_queue.c) refuses a duplicate
    ("hash_exists", -EEXIST) unless CONFIG_IMA_DISABLE_HTABLE.  A predicted record whose
    template hash an earlier case's predicted record already has (two files whose listed
    d-modsig is the same digest give the same blacklisted-hash record) is therefore
    predicted absent."""
    rows = []
    seen = set()

    def fresh(entry):
        if entry is None or entry["template_hash_sha256"] in seen:
            return None
        seen.add(entry["template_hash_sha256"])
        return entry
    for fname, _ in cases:
        note = ""
        got = dict(results.get(tag(fname), {"result": "no result", "taint": "", "insmod": ""}))
        # x86_64 and s390x print "Oops: ...", arm64's die() "Internal error: <kind>: ... [#n]"
        # (a paging request, or an SP/PC alignment exception after a return to 0x...5a5a).
        if any(re.search(r"\bOops: |\bInternal error: .*\[#\d+\]", line) for line in logs.get(tag(fname), [])):
            got["result"] = "oops (process killed)"
        rec, bls = view.get(fname, (None, []))
        k = got["result"] + "; " + ("measured sha1:%s" % rec["digest"].hex()[:12] if rec else "not measured")
        for b in bls:
            k += "; blacklisted-hash sha1:%s" % b["digest"].hex()[:12]
        w = pred.get(fname)
        if w:
            # process_measurement() stores the file's record before ima_check_blacklist() adds
            # the blacklisted-hash one.
            t = fresh(w["template"])
            blr = fresh(w["blacklisted"])
            m = w["load"] + "; " + ("measured sha1:%s" % t["template_hash_sha1"][:12] if t else "not measured")
            if w["blacklisted"] and not blr:
                note = ("; its blacklisted-hash record (sha1:%s) is in the list already, ima_add_template_entry "
                        "adds no duplicate" % w["blacklisted"]["template_hash_sha1"][:12])
            if blr:
                m += "; blacklisted-hash sha1:%s" % blr["template_hash_sha1"][:12]
            same = k == m and (rec is None or rec["data"].hex() == t["template_data"])
        else:
            m, same = "no prediction", False
        lg = list(logs.get(tag(fname), []))
        for b in bls:
            lg.append("blacklisted-hash record: buf %s" % (b["fields"][2].hex() if len(b["fields"]) > 2 else "?"))
        rows.append({"case": fname[:-3], "desc": descs[fname], "kernel": k, "taint": got["taint"],
                     "insmod": got["insmod"], "log": lg, "modsign": m,
                     "reason": ((w or {}).get("reason") or (w or {}).get("no_record") or "") + note, "agree": same})
    return rows


def ima_initramfs(work, arch=None):
    """initramfs entries of the IMA kernel: the .ima certificate at CONFIG_IMA_X509_PATH, the
    policy, and msc-finit (tests/kernel/finit.c, built statically with the host compiler, or
    the cross compiler of `arch`)."""
    der = run(["openssl", "x509", "-in", os.path.join(KEYS, IMA_CERT + ".cert.pem"), "-outform", "DER"])
    return [("etc", 0o40755, b"", 0, 0), ("etc/keys", 0o40755, b"", 0, 0),
            ("etc/keys/x509_ima.der", 0o100644, der, 0, 0),
            ("etc/ima-policy", 0o100644, IMA_POLICY.encode(), 0, 0),
            ("etc/ima-policy-probe", 0o100644, "".join(IMA_POLICY_PROBE).encode(), 0, 0),
            finit_entry(work, arch)]


def ima_replay_row(modsign, work, ima, recs):
    """One extra row: `modsign ima replay` on the kernel's whole measurement list must
    recompute every record's template hash (SHA-1 bank), and agree with the harness's count."""
    path = os.path.join(work, "binary_runtime_measurements")
    with open(path, "wb") as f:
        f.write(ima["list"] or b"")
    own = sum(hashlib.sha1(r["data"]).digest() == r["digest"] for r in recs)
    p = subprocess.run([modsign, "ima", "replay", "--bank", "sha1", path], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT)
    k = "%d records, %d template hashes = SHA-1(template data)" % (len(recs), own)
    m = "exit %d" % p.returncode
    return {"case": "measurement-list-replay", "desc": "`modsign ima replay --bank sha1` on the kernel's binary_runtime_measurements",
            "kernel": k, "taint": "", "insmod": "", "log": [], "modsign": m,
            "reason": p.stdout.decode(errors="replace")[-300:],
            "agree": p.returncode == 0 and own == len(recs) and len(recs) > 0}


def ima_policy_row(ima, recs, measures_writes):
    """One extra row: the "ima_policy_written" ima-buf records of the list after the
    IMA_POLICY_PROBE writes, against what the kernel's source says (a kernel fact, not a
    modsign prediction: modsign has no model of IMA policy rules).  measures_writes: the kernel
    has ima_measure_raw_policy() (Linux 7.3), which records the raw text of each write to the
    policy file when the active policy measures POLICY_CHECK: here the probe's second line
    only.  The record: d-ng (the IMA hash, SHA-256, of the text), n-ng "ima_policy_written",
    buf (the text); its template hash is checked by the replay row.  Both kernels take the
    275-byte rule: the policy read back holds it (ima_policy_show prints its words once)."""
    written = [r for r in recs if r["name"] == "ima-buf" and len(r["fields"]) == 3 and
               r["fields"][1] == b"ima_policy_written\0"]
    text = IMA_POLICY_PROBE[1].encode()
    want = [text] if measures_writes else []
    got = [r["fields"][2] for r in written]
    digests_ok = all(r["fields"][0] == b"sha256:\0" + hashlib.sha256(r["fields"][2]).digest() for r in written)
    taken = sum(line.strip() == "measure func=POLICY_CHECK" for line in ima["policy"])
    k = "%d ima_policy_written record(s)%s; %d POLICY_CHECK rule(s) in the policy read back" % (
        len(got), "".join(" [%d bytes]" % len(b) for b in got), taken)
    m = "%d ima_policy_written record(s)%s; 2 POLICY_CHECK rule(s) in the policy read back" % (
        len(want), "".join(" [%d bytes]" % len(b) for b in want))
    return {"case": "ima-policy-written", "desc": "policy writes after the policy is active: "
            "ima_policy_written records (Linux 7.3 ima_measure_raw_policy) and a rule over 255 bytes",
            "kernel": k, "taint": "", "insmod": "", "log": [], "modsign": m,
            "reason": "expected from the kernel source (%s)" % ("7.3: ima_main.c ima_measure_raw_policy" if measures_writes
                                                              else "no ima_measure_raw_policy before 7.3"),
            "agree": got == want and digests_ok and taken == 2}
