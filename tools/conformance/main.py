"""The command line of tools/kernel-conformance."""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time

from .common import CACHE, HERE, die, log
from .kernels import KERNELS, kv, run_kernel
from .qemu import GCOV
from .report import write_doc


def main(doc):
    """Runs the harness; doc is the entry point's docstring (its first line describes --help)."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--kernels", default=",".join(KERNELS), help="comma-separated: " + ",".join(KERNELS))
    ap.add_argument("--modsign", default=os.path.join(HERE, "build", "bin", "modsign"))
    ap.add_argument("--workdir", default=os.path.join(CACHE, "conformance"))
    ap.add_argument("--doc", default=os.path.join(HERE, "docs", "conformance.md"))
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--mutants", type=int, default=0, metavar="N",
                    help="also load N generated mutants per kernel (tools/conformance/mutate.py)")
    ap.add_argument("--seed", type=int, default=None, metavar="S",
                    help="the mutants' seed (default: a new one, printed first)")
    ap.add_argument("--mutant-batch", type=int, default=0, metavar="B",
                    help="mutants per boot (default 2000, 500 on the IMA kernel)")
    ap.add_argument("--mutants-only", action="store_true",
                    help="with --mutants or --grammar: skip the fixed cases (and kexec cases)")
    ap.add_argument("--grammar", type=int, default=0, metavar="N",
                    help="also load N of the cases generated from the kernel's grammar per kernel, spread "
                         "evenly over them (tools/conformance/gen_grammar.py; -1: all)")
    ap.add_argument("--gcov", metavar="DIR",
                    help="boot the built kernels' gcov builds (build-test-kernel --gcov) and write each "
                         "boot's counters under DIR (tools/kernel-coverage)")
    args = ap.parse_args()
    if args.gcov:
        GCOV["dir"] = os.path.abspath(args.gcov)
    if args.mutants_only and not (args.mutants or args.grammar):
        die("--mutants-only needs --mutants N or --grammar N", 2)
    if args.mutants < 0 or args.mutant_batch < 0:
        die("--mutants and --mutant-batch take a count >= 0", 2)
    if args.mutants and args.seed is None:
        args.seed = random.SystemRandom().randrange(1, 1 << 32)
    if args.mutants:
        log("mutation seed %d (%d mutants per kernel; rerun with --mutants %d --seed %d)" % (
            args.seed, args.mutants, args.mutants, args.seed))
    for t in ("qemu-system-x86_64",):
        if not shutil.which(t):
            die("%s not found (apt-get install qemu-system-x86)" % t, 77)
    if not (shutil.which("busybox") or os.path.exists("/bin/busybox")):
        die("busybox not found (apt-get install busybox-static)", 77)
    deps = subprocess.run([os.path.join(HERE, "tools", "bootstrap-deps")], stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL)
    root = kv(deps.stdout).get("OPENSSL_ROOT", "")
    if kv(deps.stdout).get("PKCS11_PROVIDER"):  # the token cases' pkcs11: keys
        os.environ.setdefault("MODSIGN_PKCS11_PROVIDER", kv(deps.stdout)["PKCS11_PROVIDER"])
    openssl = os.path.join(root, "bin", "openssl") if root else "openssl"
    os.environ["PATH"] = os.path.dirname(openssl) + os.pathsep + os.environ["PATH"] if root else os.environ["PATH"]
    if not os.access(args.modsign, os.X_OK):
        die("%s not built (run tools/check first)" % args.modsign)
    t0 = time.time()
    runs = []
    for name in args.kernels.split(","):
        if name not in KERNELS:
            die("unknown kernel %s" % name, 2)
        runs.append(run_kernel(name, args, args.modsign, openssl))
        # written after every kernel, so that a long run leaves its results so far
        elapsed = time.time() - t0
        os.makedirs(os.path.dirname(args.doc), exist_ok=True)
        write_doc(args.doc, runs, elapsed, args.modsign)
        with open(os.path.join(args.workdir, "results.json"), "w") as f:
            json.dump(runs, f, indent=1)
    total = sum(len(r["rows"]) for r in runs)
    bad = sum(not x["agree"] for r in runs for x in r["rows"])
    log("%d cases on %d kernels, %d disagreements, %.0f s; table in %s" % (total, len(runs), bad, elapsed, args.doc))
    if args.mutants:
        mrows = [x for r in runs if r.get("mutants") for x in r["mutants"]["rows"]]
        mbad = sum(not x["agree"] for x in mrows)
        log("%d mutants (seed %d) on %d kernels, %d disagreements" % (len(mrows), args.seed, len(runs), mbad))
        bad += mbad
    if args.grammar:
        grows = [x for r in runs if r.get("generated") for x in r["generated"]["rows"]]
        gbad = sum(not x["agree"] for x in grows)
        log("%d generated cases on %d kernels, %d disagreements" % (len(grows), len(runs), gbad))
        bad += gbad
    sys.exit(1 if bad else 0)
