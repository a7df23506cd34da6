"""Re-predict a finished mutation run with another modsign, without booting again.

    cd tools && python3 -m conformance.repredict WORKDIR MODSIGN [KERNEL ...]

With MODSIGN_REPREDICT_OUT=FILE in the environment, the re-predicted runs are also written
to FILE in results.json's form (for report.write_doc).

WORKDIR is a --workdir of tools/kernel-conformance --mutants (its results.json and each
kernel's mutants/b*/ batches, which keep their cases and serial log when they disagreed).
For every kept batch the kernel's results are read back from its serial log and compared,
by the same row builders, with MODSIGN's predictions; batches that were deleted (every
mutant agreed) are counted from results.json as they were.  Prints per kernel the mutants,
the agreements before and after, and every mutant that still disagrees.  Used to check a
fix of the mirror against the kernels' recorded answers (tools/conformance/mutants.py)."""
import glob
import json
import os
import sys

from .kernels import KERNELS, plain_rows
from .predict import ima_kernel_view, ima_predict, ima_rows, predict
from .qemu import parse_serial


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    work, modsign = sys.argv[1], os.path.abspath(sys.argv[2])
    runs = json.load(open(os.path.join(work, "results.json")))
    only = set(sys.argv[3:])
    for r in runs:
        name = r["name"]
        if only and name not in only or not r.get("mutants"):
            continue
        _, profile, flags, _, _ = KERNELS[name]
        before = {x["id"]: x for x in r["mutants"]["rows"]}
        after = dict(before)
        k = None
        for bdir in sorted(glob.glob(os.path.join(work, name, "mutants", "b*"))):
            cases = [(os.path.basename(p), open(p, "rb").read()) for p in
                     sorted(glob.glob(os.path.join(bdir, "cases", "*.ko")))]
            if not cases:
                continue
            seed = r["mutants"]["seed"]
            ids = {f: "%d:%d" % (seed, int(f[1:-3])) for f, _ in cases}
            if k is None:
                k = kernel_of(name, r)
            paths = [os.path.join(bdir, "cases", f) for f, _ in cases]
            results, logs, _, _, _, ima = parse_serial(os.path.join(bdir, "serial.log"))
            descs = {f: before.get(ids[f], {}).get("class", "") for f, _ in cases}
            if k.get("ima"):
                pred = ima_predict(modsign, paths, k["keyring"], k["blacklist"], flags)
                rows = ima_rows(cases, descs, results, logs, pred, ima_kernel_view(ima, cases)[1])
            else:
                pred = predict(modsign, profile, flags, k["keyring"], paths, k.get("blacklist"))
                rows = plain_rows(cases, descs, results, logs, pred)
            for (f, _), row in zip(cases, rows):
                old = before.get(ids[f], {})
                after[ids[f]] = {"id": ids[f], "class": descs[f], "original": old.get("original"),
                                 "kernel": row["kernel"], "modsign": row["modsign"], "agree": row["agree"],
                                 "reason": row["reason"]}
        r["mutants"]["rows"] = [after[x["id"]] for x in r["mutants"]["rows"]]
        r["mutants"]["modsign"] = modsign
        n = len(after)
        print("%s: %d mutants; agree before %d, after %d" % (
            name, n, sum(x["agree"] for x in before.values()), sum(x["agree"] for x in after.values())))
        for x in after.values():
            if not x["agree"]:
                print("  %s %s (%s): kernel %s, modsign %s (%s)" % (
                    x["id"], x["class"], x.get("original"), x["kernel"], x["modsign"], (x.get("reason") or "")[:140]))
    if os.environ.get("MODSIGN_REPREDICT_OUT"):
        with open(os.environ["MODSIGN_REPREDICT_OUT"], "w") as f:
            json.dump([r for r in runs if not only or r["name"] in only], f, indent=1)


def kernel_of(name, r):
    """Kernel `name` as run_kernel got it (keyring, blacklist; cached downloads and builds)."""
    return KERNELS[name][4]()


if __name__ == "__main__":
    main()
