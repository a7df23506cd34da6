"""docs/conformance.md: the table case x kernel."""
import re

from .predict import supports_blacklist


def files_section(r):
    """The sections of the file-signature kernels (tools/conformance/files_run.py, fit_run.py)."""
    L = ["## %s (`%s`)" % (r["title"], r["release"]), ""]
    if r["name"] == "mldsa-ima-files":
        L += ["Files carrying `security.ima` (built by the harness with openssl alone) on tmpfs and on",
              "ext4 (4 KiB blocks, 256-byte inodes, with and without `ea_inode`), XFS, btrfs and f2fs disks",
              "made with mkfs on the host; one boot per policy, `ima_template=ima-sig`, the `.ima` keyring",
              "holding the ML-DSA-65 certificate (CONFIG_IMA_X509_PATH) and, added by /init with add_key,",
              "the built-in RSA, ECDSA P-384, ML-DSA-44 and ML-DSA-87 certificates and an ECDSA P-256",
              "leaf of the built-in P-384 key.  *Kernel*: the open(2) (FILE_CHECK) or execve(2)",
              "(BPRM_CHECK) result and the ima-sig record's SHA-1 template hash; where the file system",
              "refused the xattr, setxattr's errno first.  *modsign*: `ima verify --json` (open) and",
              "`ima template --template ima-sig --security-ima` (record); a row agrees only when the",
              "strings and the template data bytes are equal.  The kernel has no CONFIG_AUDIT, so the",
              "audit cause is modsign's alone (in the reason column).", ""]
        for b in r.get("boots", []):
            L.append("- boot `%s`: mounts %s; %d keys added to .ima" % (
                b["policy"], ", ".join("%s %s" % kv for kv in sorted(b["mounts"].items())) or "-",
                sum("OK" in a for a in b["addkey"])))
        L += ["", "| case | situation | kernel | modsign | agree | reason |", "|---|---|---|---|---|---|"]
        for x in r["rows"]:
            L.append("| %s | %s | %s | %s | %s | %s |" % (x["case"], x["desc"], x["kernel"], x["modsign"],
                     "yes" if x["agree"] else "**NO**", x["reason"][:200].replace("|", "\\|")))
        return L + [""]
    L += ["Largest `security.ima` setxattr(2) accepts on an empty file (binary search in the guest,",
          "both ends confirmed), without and with a 27-byte `security.selinux`, against `modsign ima",
          "fit`; then the space (statfs f_bfree before and after, sync) that `security.ima` values of",
          "each algorithm's size take on %s files against `modsign ima estimate` of the same tree" % "2000",
          "(ext4, XFS, f2fs: the allocation itself, equal to the byte; btrfs: a lower bound, the item",
          "bytes twice for DUP metadata, as leaves split half-full).", "",
          "| configuration | other xattrs | measured limit | modsign ima fit | agree | algorithms that fit |",
          "|---|---|---|---|---|---|"]
    for x in r["rows"]:
        if x.get("kind") == "fit":
            L.append("| %s | %s | %s | %s | %s | %s |" % (x["config"], "security.selinux (27)" if x["variant"] == "label" else "-",
                     x["kernel"], x["modsign"], "yes" if x["agree"] else "**NO**", x["reason"]))
    L += ["", "| configuration | algorithm | measured (statfs) | modsign ima estimate | agree | naive files x size |",
          "|---|---|---|---|---|---|"]
    for x in r["rows"]:
        if x.get("kind") == "overhead":
            L.append("| %s | %s | %s | %s | %s | %d |" % (x["config"], x["alg"], x["kernel"], x["modsign"],
                     "yes" if x["agree"] else "**NO**", x["naive"]))
    return L + [""] + claims(r["rows"])


def claims(rows):
    """The two claims of the PQC discussion, against the measured rows."""
    fit = {(x["config"], x["variant"]): x["kernel"] for x in rows if x.get("kind") == "fit"}
    over = {(x["config"], x["alg"]): x for x in rows if x.get("kind") == "overhead"}
    L = ["Claims, against these measurements:", ""]
    if ("ext4-4k", "plain") in fit and ("ext4-4k-ea_inode", "plain") in fit:
        L.append("- *ext4 needs ea_inode for ML-DSA-87 at 4 KiB*: ext4 4 KiB without ea_inode: %s, an ML-DSA-87 "
                 "security.ima is 4636 bytes; with ea_inode: %s.  Confirmed when the first limit is below 4636." % (
                     fit[("ext4-4k", "plain")], fit[("ext4-4k-ea_inode", "plain")]))
    per = []
    for cfg in ("ext4-4k", "xfs", "btrfs-16k", "f2fs"):
        a, b = over.get((cfg, "ml-dsa-65")), over.get((cfg, "ecdsa-p384"))
        if a and b and a.get("measured") is not None and b.get("measured") is not None:
            per.append("%s %d bytes per file (ECDSA P-384 %d)" % (cfg, a["measured"] // 2000, b["measured"] // 2000))
    if per:
        L.append("- *ML-DSA-65 overhead is absorbed*: measured " + "; ".join(per) + ".  Not absorbed on any of them "
                 "against an unsigned file; on ext4 with 256-byte inodes ECDSA P-384 costs the same xattr block, so "
                 "there ML-DSA-65 costs nothing more than ECDSA.")
    return L + [""]


def write_doc(path, runs, elapsed, modsign):
    L = ["# Real-kernel conformance", "",
         "Generated by `tools/kernel-conformance` (run by `tools/check --kernels`); do not edit.",
         "The recorded 10,000-mutant campaign per kernel (`--mutants 10000`) is in",
         "[conformance-mutants.md](conformance-mutants.md).",
         "Each case is a module loaded with insmod into the kernel under qemu (TCG). *Kernel* is",
         "what the kernel did: `loads` (init_module returned 0, no `E` in /sys/module/NAME/taint),",
         "`loads-tainted` (0, with `E`), or `refused ERRNO`. *modsign* is the outcome of",
         "`modsign verify --json` with the kernel's profile and keyring. A soft failure",
         "(ENOKEY, ENOPKG, ENODATA without enforcement) shows as `loads-tainted` on both sides, as",
         "the kernel does not report which one it was; under `module.sig_enforce=1` it does",
         "(\"Loading of module with unavailable key is rejected\"), and both sides then carry the name.", "",
         "The busybox insmod used tries finit_module and then init_module, so each refused load",
         "logs its kernel lines twice. On the built 7.2 and 7.3 kernels the blacklist also holds `bin:` +",
         "SHA-256 of the unsigned test module: module signature checking never consults `bin:`",
         "entries (only IMA does), so every validly signed case still loads.", "",
         "On the IMA kernels (`mldsa-ima`, `mldsa73-ima`) each case is loaded with finit_module alone, and both",
         "columns read `<load result>; measured sha1:<template hash>` or `not measured`, plus",
         "`blacklisted-hash sha1:<template hash>` for the record ima_check_blacklist() adds; a",
         "row agrees only when these strings and the ima-modsig template data bytes are equal.",
         "modsign's side: `ima appraise` (the `.ima` keyring and the blacklist) decides whether IMA",
         "lets the file through (else EACCES); then `verify` with the built-in keyring gives the",
         "loader's result; `ima template` gives the record. The list holds no two records with",
         "the same template hash (ima_add_template_entry), so a repeated blacklisted-hash record is",
         "predicted absent. The last IMA case overflows the kernel's 201-byte d-modsig buffer",
         "(ima_eventdigest_init_common): the kernel oopses and kills the loading process, which",
         "`ima template` predicts (EMSGSIZE).", "",
         "| kernel | release | command line | modsign profile | cases | agree |", "|---|---|---|---|---|---|"]
    for r in runs:
        L.append("| %s | %s | %s | `%s` | %d | %d |" % (r["title"], r["release"], r["cmdline"] or "-", r["profile"],
                                                      len(r["rows"]), sum(x["agree"] for x in r["rows"])))
    L += ["", "Total run time: %.0f s." % elapsed, ""]
    if not supports_blacklist(modsign):
        L += ["This modsign's `verify` has no `--blacklist`, so it cannot know the built kernels'",
              "CONFIG_SYSTEM_BLACKLIST_HASH_LIST: the blacklisted certificate is left out of its keyring,",
              "and a case whose outcome depends on the blacklist itself (a blacklisted certificate",
              "embedded in the message, §9.31) is predicted wrongly.", ""]
    for r in runs:
        if r["name"] in ("mldsa-ima-files", "mldsa-ima-xattr"):
            L += files_section(r)
            continue
        L += ["## %s (`%s`)" % (r["title"], r["release"]), "",
              "| case | situation | kernel | modsign | agree | kernel log |", "|---|---|---|---|---|---|"]
        for x in r["rows"]:
            lg = "; ".join(re.sub(r"^\[\s*[\d.]+\]\s*", "", s) for s in x["log"])[:160]
            L.append("| %s | %s | %s | %s | %s | %s |" % (
                x["case"], x["desc"], x["kernel"], x["modsign"], "yes" if x["agree"] else "**NO**",
                lg.replace("|", "\\|")))
        if r.get("ima"):
            L += ["", "IMA policy in force (read back from /sys/kernel/security/ima/policy):", ""]
            L += ["- `%s`" % x for x in r["ima"]["policy"]]
            L += ["", "The measurement list held %d records at the end." % r["ima"]["records"]]
        keys = [re.sub(r"^\S+\s+\S+\s+\d+\s+perm\s+\S+\s+\d+\s+\d+\s+", "", k) for k in r["keys"]
                if re.search(r"\s(asymmetri|blacklist)\s", k)]
        if keys:
            L += ["", "Keys in the running kernel (`/proc/keys`, asymmetric and blacklist entries):", ""]
            L += ["- `%s`" % k.strip() for k in keys]
        L.append("")
    L += grammar_section(runs)
    L += mutation_section(runs)
    with open(path, "w") as f:
        f.write("\n".join(L))


NODE_OPS = ["tag", "length.long-form", "length.plus-one", "length.minus-one", "length.huge", "length.indefinite",
            "remove", "duplicate", "reorder", "value.empty", "value.drop-last", "value.append-null",
            "value.as-primitive", "value.bitflip", "value.truncate", "value.random", "value.append",
            "value.leading-zero", "version", "oid-swap"]


def _split(cls):
    """(field, operation) of one mutation class: ("signerinfo.digestAlgorithm.oid",
    "oid-swap"); trailer, marker, pkcs7 and content classes are their own field."""
    if not cls.startswith(("module_signature.", "marker.", "pkcs7.", "content.")):
        for op in sorted(NODE_OPS, key=len, reverse=True):
            if cls.endswith("." + op):
                return cls[:-len(op) - 1], op
    return cls, cls.split(".", 1)[-1]


def _family(cls):
    return _split(cls)[0]


def mutation_section(runs):
    """The mutation campaign's section: seed, counts, agreement per kernel, counts per mutation
    class and outcome, and every disagreement."""
    muts = [r for r in runs if r.get("mutants")]
    if not muts:
        return []
    seed = muts[0]["mutants"]["seed"]
    n = muts[0]["mutants"]["count"]
    L = ["## Mutation campaign", "",
         "`tools/kernel-conformance --mutants %d --seed %d` (tools/conformance/mutate.py): each mutant is a" % (n, seed),
         "valid signed module of a form modsign makes (%s) with one structural change, or two" %
         ", ".join(muts[0]["mutants"]["originals"]),
         "(classes `A + B`): a DER node of ContentInfo/SignedData/SignerInfo/attributes/certificates (tag,",
         "length octets, value; removed, duplicated, moved; OID swapped among those the kernel knows;",
         "version), the module_signature trailer, the marker, the PKCS#7 bytes or the module content.",
         "Mutant `S:i` is rebuilt from its id alone. Each is loaded in the guest by one process per",
         "batch (tests/kernel/batch.c) and compared as the fixed cases are (errno, taint, the",
         "enforced soft error's name; on the IMA kernel also the ima-modsig record).", "",
         "| kernel | mutants | agree | disagree | s per 1,000 (generate + predict + boot) |", "|---|---|---|---|---|"]
    for r in muts:
        m = r["mutants"]
        rows = m["rows"]
        t = m["times"]
        per = 1000.0 * (t["generate"] + t["predict"] + t["boot"]) / max(1, len(rows))
        L.append("| %s | %d | %d | %d | %.0f |" % (r["title"], len(rows), sum(x["agree"] for x in rows),
                                                 sum(not x["agree"] for x in rows), per))
    allrows = [x for r in muts for x in r["mutants"]["rows"]]
    L += ["", "Total: %d mutants, %d agree, %d disagree." % (
        len(allrows), sum(x["agree"] for x in allrows), sum(not x["agree"] for x in allrows)), ""]
    # per class family: count, outcomes (kernel side), disagreements
    fam = {}
    for x in allrows:
        parts = x["class"].split(" + ")
        key = _family(parts[0]) if len(parts) == 1 else "two changes: " + " + ".join(
            sorted({_family(p).split(".")[0] for p in parts}))
        f = fam.setdefault(key, {"n": 0, "bad": 0, "out": {}})
        f["n"] += 1
        f["bad"] += not x["agree"]
        o = x["kernel"].split(";")[0]
        f["out"][o] = f["out"].get(o, 0) + 1
    L += ["### Per mutation class (all kernels)", "",
          "| class | mutants | kernel outcomes | disagree |", "|---|---|---|---|"]
    for k in sorted(fam):
        f = fam[k]
        outs = ", ".join("%s %d" % (o, c) for o, c in sorted(f["out"].items(), key=lambda kv: -kv[1]))
        L.append("| `%s` | %d | %s | %d |" % (k, f["n"], outs, f["bad"]))
    ops = {}
    for x in allrows:
        for p in x["class"].split(" + "):
            if _split(p)[0] != p:
                ops[_split(p)[1]] = ops.get(_split(p)[1], 0) + 1
    L += ["", "DER node operations (in single and double mutants): " +
          ", ".join("`%s` %d" % (k, v) for k, v in sorted(ops.items())) + ".", ""]
    bad = [(r, x) for r in muts for x in r["mutants"]["rows"] if not x["agree"]]
    if bad:
        L += ["### Disagreements", "",
              "| kernel | mutant | class | original | kernel | modsign | modsign's reason |", "|---|---|---|---|---|---|---|"]
        for r, x in bad:
            L.append("| %s | `%s` | `%s` | %s | %s | %s | %s |" % (
                r["name"], x["id"], x["class"], x["original"], x["kernel"], x["modsign"],
                (x.get("reason") or "").replace("|", "\\|")[:160]))
        L.append("")
    return L


def grammar_section(runs):
    """The cases generated from the kernel's grammar: per kernel the count (of how many) and
    agreement, per change family and kernel the count, and every disagreement."""
    gens = [r for r in runs if r.get("generated")]
    if not gens:
        return []
    L = ["## Cases generated from the kernel's grammar", "",
         "`tools/kernel-conformance --grammar N` (tools/conformance/gen_grammar.py): every element of a",
         "valid signature labelled with the production of the kernel's pkcs7.asn1, x509.asn1 or",
         "x509_akid.asn1 (read from linux-source-7.2) it fills, and changed one way at a time: its",
         "length in 1-8 long-form octets, indefinite, a long-form tag, the constructed bit; an",
         "ANY value indefinite throughout, nested 12 deep, its end-of-contents early, inside or",
         "missing; an OPTIONAL field dropped or added (each CHOICE alternative, a list empty and",
         "with one element); a CHOICE switched to each other alternative; a SET OF / SEQUENCE OF",
         "with its first element twice, its last first, reversed, empty.  A case id",
         "`<original>:<production>.<change>` rebuilds its bytes.", "",
         "| kernel | originals | cases run (of) | agree | disagree |", "|---|---|---|---|---|"]
    for r in gens:
        g = r["generated"]
        rows = g["rows"]
        L.append("| %s | %s | %d (%d) | %d | %d |" % (r["title"], ", ".join(g["originals"]), len(rows), g.get("total", len(rows)),
                                                    sum(x["agree"] for x in rows), sum(not x["agree"] for x in rows)))
    allrows = [x for r in gens for x in r["generated"]["rows"]]
    L += ["", "Total: %d generated cases, %d agree, %d disagree." % (
        len(allrows), sum(x["agree"] for x in allrows), sum(not x["agree"] for x in allrows))]
    fams = {}
    for r in gens:
        for x in r["generated"]["rows"]:
            fam = x["class"].rsplit(".", 1)[-1]
            fam = "len1-8" if re.match(r"len\d$", fam) else fam
            f = fams.setdefault(fam, {})
            f[r["name"]] = f.get(r["name"], 0) + 1
    names = [r["name"] for r in gens]
    L += ["", "Per change (cases on each kernel):", "", "| change | " + " | ".join(names) + " |",
          "|---|" + "---|" * len(names)]
    for fam in sorted(fams):
        L.append("| `%s` | %s |" % (fam, " | ".join(str(fams[fam].get(n, 0)) for n in names)))
    bad = [(r, x) for r in gens for x in r["generated"]["rows"] if not x["agree"]]
    if bad:
        L += ["", "### Disagreements", "", "| kernel | case | kernel | modsign | modsign's reason |", "|---|---|---|---|---|"]
        for r, x in bad:
            L.append("| %s | `%s` | %s | %s | %s |" % (r["name"], x["id"], x["kernel"], x["modsign"],
                                                  (x.get("reason") or "").replace("|", "\\|")[:160]))
    L.append("")
    return L
