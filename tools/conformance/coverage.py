"""The kernel's own coverage of the conformance cases (tools/kernel-coverage): each boot's gcov
counters (qemu.gcov_collect) merged per kernel build with gcov-tool, read with gcovr, and
reported per file of tests/kernel/gcov-objects against tests/kernel/gcov-reasons."""
import json
import os
import re
import shutil
import subprocess

from .common import CACHE, HERE, die, log

OBJECTS = os.path.join(HERE, "tests", "kernel", "gcov-objects")
REASONS = os.path.join(HERE, "tests", "kernel", "gcov-reasons")


def objects():
    """[(object, the option that builds it)], the object relative to the kernel tree
    (tests/kernel/gcov-objects)."""
    with open(OBJECTS) as f:
        return [tuple(line.split()[:2]) for line in f if line.strip() and not line.startswith("#")]


def build_env(name):
    """build.env of the kernel build directory <name> under $MODSIGN_CACHE/kernel-build."""
    path = os.path.join(CACHE, "kernel-build", name, "build.env")
    if not os.path.exists(path):
        die("no %s: the gcov counters name a kernel build that is gone" % path)
    with open(path) as f:
        return dict(line.rstrip("\n").split("=", 1) for line in f if "=" in line)


def merge_build(gdir, env, out):
    """One directory of .gcda/.gcno for a kernel build: every boot's counters (gdir/boot-N/<obj
    tree>/<object>.gcda) summed with `gcov-tool merge`, and the build's .gcno files beside."""
    obj = env["GCOV_OBJ"].strip("/")
    boots = sorted((d for d in os.listdir(gdir) if d.startswith("boot-")), key=lambda d: int(d[5:]))
    shutil.rmtree(out, ignore_errors=True)
    acc = None
    for b in boots:
        tree = os.path.join(gdir, b, obj)
        if not os.path.isdir(tree):
            log("coverage: %s/%s holds no counters of %s" % (gdir, b, env["GCOV_OBJ"]))
            continue
        if acc is None:
            shutil.copytree(tree, out)
            acc = out
            continue
        p = subprocess.run(["gcov-tool", "merge", "-o", out + ".tmp", out, tree],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if p.returncode != 0:
            die("gcov-tool merge %s: %s" % (tree, p.stdout.decode(errors="replace")[-800:]))
        shutil.rmtree(out)
        os.rename(out + ".tmp", out)
    if acc is None:
        return 0
    for root, _, files in os.walk(env["GCNO"]):
        for f in files:
            rel = os.path.relpath(os.path.join(root, f), env["GCNO"])
            os.makedirs(os.path.dirname(os.path.join(out, rel)), exist_ok=True)
            shutil.copy(os.path.join(root, f), os.path.join(out, rel))
    return len(boots)


def sources(env):
    """{source path as gcov names it: tree-relative .c} for every listed object: the kernel
    source tree's file, or the object tree's for a generated decoder (x509.asn1.c)."""
    out = {}
    for o, _ in objects():
        rel = o[:-2] + ".c"
        for root in (env["SRC"], env["GCOV_OBJ"]):
            out[os.path.realpath(os.path.join(root, rel))] = rel
    return out


def gcovr(merged, env, out_json):
    """gcovr's JSON of the merged counters, limited to the listed sources."""
    srcs = sources(env)
    cmd = ["gcovr", "--root", env["SRC"], "--object-directory", merged, "--json", out_json,
           "--exclude-unreachable-branches", "--gcov-ignore-parse-errors"]
    for path in srcs:
        cmd += ["--filter", re.escape(path) + "$"]
    p = subprocess.run(cmd, cwd=env["GCOV_OBJ"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if p.returncode != 0:
        die("gcovr: %s" % p.stdout.decode(errors="replace")[-1500:])


def load_json(path, env):
    """{tree-relative source: {line: [count, [branch counts], function]}} of a gcovr JSON (the
    function: the one whose first line is the nearest at or above the line)."""
    srcs = sources(env)
    with open(path) as f:
        data = json.load(f)
    out = {}
    for fe in data["files"]:
        name = fe["file"]
        rel = srcs.get(os.path.realpath(name if os.path.isabs(name) else os.path.join(env["SRC"], name)))
        if rel is None:
            continue
        funcs = sorted((fn["lineno"], fn["name"]) for fn in fe.get("functions", []))
        lines = out.setdefault(rel, {})
        for ln in fe["lines"]:
            if ln.get("gcovr/noncode"):
                continue
            n = ln["line_number"]
            fn = next((name for first, name in reversed(funcs) if first <= n), "")
            lines[n] = [ln["count"], [b["count"] for b in ln.get("branches", [])], fn]
    return out


def merge_lines(into, more):
    """Coverage of the same source from two builds summed line by line (a line one build
    compiled and the other did not keeps the one build's counts; branches likewise)."""
    for rel, lines in more.items():
        tgt = into.setdefault(rel, {})
        for n, (c, br, fn) in lines.items():
            if n not in tgt:
                tgt[n] = [c, list(br), fn]
                continue
            br0 = tgt[n][1]
            tgt[n][0] += c
            tgt[n][1] = [a + b for a, b in zip(br0, br)] if len(br0) == len(br) else max(br0, br, key=len)
    return into


def load_reasons():
    """tests/kernel/gcov-reasons (its header): [{file, func, text, kind, why}]; kind is
    unreachable (left out of the reachable lines), scope or open (both left in)."""
    out = []
    if not os.path.exists(REASONS):
        return out
    with open(REASONS) as f:
        for n, line in enumerate(f, 1):
            if not line.strip() or line.startswith("#"):
                continue
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 4 or not parts[3].startswith(("unreachable: ", "scope: ", "open: ")):
                die("%s:%d: want file<TAB>function<TAB>text or *<TAB>unreachable:|scope:|open: reason" % (REASONS, n))
            kind, why = parts[3].split(": ", 1)
            out.append({"file": parts[0], "func": parts[1], "text": parts[2], "kind": kind, "why": why,
                        "used": 0, "where": "%s:%d" % (os.path.basename(REASONS), n)})
    return out


def source_lines(rel, envs):
    """The lines of a listed source: the kernel tree's, or a build's object tree's (generated)."""
    for env in envs:
        for root in (env["SRC"], env["GCOV_OBJ"]):
            p = os.path.join(root, rel)
            if os.path.exists(p):
                with open(p, errors="replace") as f:
                    return f.read().split("\n")
    return []


def explain(rel, n, fn, text, reasons):
    """The reason (dict) that explains uncovered line n of rel, or None."""
    for r in reasons:
        if r["file"] == rel and r["func"] in (fn, "*") and r["text"] in ("*", text, "L%d" % n):
            r["used"] += 1
            return r
    return None


def file_summary(rel, lines, text, reasons):
    """Counts of one source and its uncovered lines, each with its reason."""
    s = {"file": rel, "lines": len(lines), "covered": 0, "unreachable": 0, "scope": 0, "branches": 0,
         "branches_covered": 0, "branches_unreachable": 0, "branches_scope": 0, "uncovered": []}
    for n in sorted(lines):
        c, br, fn = lines[n]
        s["branches"] += len(br)
        s["branches_covered"] += sum(1 for b in br if b > 0)
        if c > 0:
            s["covered"] += 1
            continue
        t = text[n - 1].strip() if n <= len(text) else ""
        r = explain(rel, n, fn, t, reasons)
        if r and r["kind"] == "unreachable":
            s["unreachable"] += 1
            s["branches_unreachable"] += len(br)
        if r and r["kind"] == "scope":
            s["scope"] += 1
            s["branches_scope"] += sum(1 for b in br if b == 0)
        s["uncovered"].append({"line": n, "function": fn, "text": t,
                               "kind": r["kind"] if r else "unexplained", "why": r["why"] if r else ""})
    reach = s["lines"] - s["unreachable"]
    breach = s["branches"] - s["branches_unreachable"]
    s["line_pct"] = 100.0 * s["covered"] / reach if reach else 100.0
    s["branch_pct"] = 100.0 * s["branches_covered"] / breach if breach else 100.0
    s["scope_line_pct"] = pct(s["covered"], reach - s["scope"])
    s["scope_branch_pct"] = pct(s["branches_covered"], breach - s["branches_scope"])
    return s


def pct(part, whole):
    return 100.0 * part / whole if whole else 100.0


def summarize(cov, envs, reasons):
    """Per listed object: its summary, or why it has none (not built, no executable lines)."""
    out = []
    for obj, option in objects():
        rel = obj[:-2] + ".c"
        if rel in cov and cov[rel]:
            out.append(file_summary(rel, cov[rel], source_lines(rel, envs), reasons))
        elif any(os.path.exists(os.path.join(e["GCNO"], obj[:-2] + ".gcno")) for e in envs):
            out.append({"file": rel, "note": "tables only: no executable line (its grammar runs in lib/asn1_decoder.c)"})
        else:
            out.append({"file": rel, "note": "not built in the measured kernels (%s)" % option})
    return out


def ranges(nums):
    """'12-14, 20' of sorted line numbers."""
    out, start, prev = [], None, None
    for n in nums + [None]:
        if start is not None and (n is None or n != prev + 1):
            out.append(str(start) if start == prev else "%d-%d" % (start, prev))
            start = None
        if n is not None and start is None:
            start = n
        prev = n
    return ", ".join(out)


def write_doc(path, summary, meta, reasons):
    """docs/conformance-coverage.md: the table, then each file's uncovered lines by function
    with their reasons, then the reasons that matched nothing (stale)."""
    L = ["# The kernel's coverage by the conformance cases", "",
         "Generated by `tools/kernel-coverage`; do not edit.  %s" % meta["what"], "",
         "How much of Linux 7.2.13's signature-checking code (the files below, tests/kernel/gcov-objects)",
         "the conformance cases run, measured by the kernel itself: gcov builds of the 7.2.13 conformance",
         "kernels under qemu; each boot's counters are copied out of debugfs, summed per build with",
         "`gcov-tool merge`, read with `gcovr` and summed line by line over the builds.  Every line the",
         "cases do not run has a reason in tests/kernel/gcov-reasons, of one of three kinds:", "",
         "- *unreachable*: no input from user space reaches it on these kernels (an allocation failure,",
         "  a configuration they lack, a caller that is only the kernel, or a line gcov counts no",
         "  execution of although it runs); left out of the *reachable* lines and branches;",
         "- *scope*: user space reaches it, through an interface modsign does not predict (named in",
         "  the reason: keyctl's public-key operations, IMA policy options other than the appraise",
         "  rules modsign predicts, ...); counted as reachable and not covered;",
         "- *open*: inside what modsign predicts; the reason names the case that will reach it;",
         "  counted as reachable and not covered.", "",
         "A line no reason explains is *unexplained*.  The *reachable* columns count covered lines",
         "(branches) of all but the unreachable ones; *predicted* also leaves out the scope lines and",
         "their branches: how much of what modsign predicts the cases reach.  The last column counts",
         "the uncovered lines of each kind.  (gcovr's `--exclude-unreachable-branches` only drops",
         "branches the compiler made that no source line shows.)", "",
         "| file | lines covered / reachable | lines % | branches covered / reachable | branches % "
         "| predicted: lines %, branches % | uncovered lines: unreachable, scope, open, unexplained |",
         "|---|---|---|---|---|---|---|"]
    for s in summary:
        if "note" in s:
            L.append("| %s | – | – | – | – | – | %s |" % (s["file"], s["note"]))
            continue
        k = {kind: sum(1 for u in s["uncovered"] if u["kind"] == kind) for kind in ("unreachable", "scope", "open", "unexplained")}
        L.append("| %s | %d / %d | %.1f | %d / %d | %.1f | %.1f, %.1f | %d, %d, %d, %d |" % (
            s["file"], s["covered"], s["lines"] - s["unreachable"], s["line_pct"], s["branches_covered"],
            s["branches"] - s["branches_unreachable"], s["branch_pct"], s["scope_line_pct"], s["scope_branch_pct"],
            k["unreachable"], k["scope"], k["open"], k["unexplained"]))
    tl = sum(s.get("lines", 0) - s.get("unreachable", 0) for s in summary)
    tc = sum(s.get("covered", 0) for s in summary)
    tb = sum(s.get("branches", 0) - s.get("branches_unreachable", 0) for s in summary)
    tbc = sum(s.get("branches_covered", 0) for s in summary)
    ts = sum(s.get("scope", 0) for s in summary)
    tbs = sum(s.get("branches_scope", 0) for s in summary)
    kinds = {kind: sum(1 for s in summary for u in s.get("uncovered", []) if u["kind"] == kind)
             for kind in ("unreachable", "scope", "open", "unexplained")}
    L += ["| **all** | %d / %d | %.1f | %d / %d | %.1f | %.1f, %.1f | %d, %d, %d, %d |" % (
        tc, tl, pct(tc, tl), tbc, tb, pct(tbc, tb), pct(tc, tl - ts), pct(tbc, tb - tbs),
        kinds["unreachable"], kinds["scope"], kinds["open"], kinds["unexplained"]), ""]
    L += ["## Uncovered lines", ""]
    for s in summary:
        if not s.get("uncovered"):
            continue
        L += ["### %s" % s["file"], ""]
        groups = {}
        for u in s["uncovered"]:
            groups.setdefault((u["function"], u["kind"], u["why"]), []).append(u)
        for (fn, kind, why), us in sorted(groups.items(), key=lambda g: g[1][0]["line"]):
            first = us[0]["text"][:70].replace("|", "\\|").replace("`", "'")
            L.append("- `%s` lines %s (`%s`%s): **%s**%s" % (
                fn or "?", ranges([u["line"] for u in us]), first, " …" if len(us) > 1 else "", kind,
                ": " + why if why else ""))
        L.append("")
    stale = [r for r in reasons if not r["used"]]
    if stale:
        L += ["## Reasons that matched no uncovered line", ""]
        L += ["- %s: %s `%s` %s" % (r["where"], r["file"], r["func"], r["text"]) for r in stale]
        L.append("")
    with open(path, "w") as f:
        f.write("\n".join(L))
