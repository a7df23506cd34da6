"""The mutation campaign on one kernel (tools/kernel-conformance --mutants N --seed S).

The N mutants of the seed (mutate.py) are loaded in batches, one boot per batch, by one
process in the guest (tests/kernel/batch.c: finit_module, then init_module as busybox insmod
does, or finit_module alone where the fixed cases use msc-finit), and compared with modsign's
prediction for the batch (one `modsign verify --json` over all its files, or on the IMA kernel
the ima_predict() commands) by the same row builders as the fixed cases: plain_rows (errno,
taint, the name of an enforced soft error from the log) or ima_rows (also the ima-modsig
record's template hash and data bytes).  A batch of 2,000 mutants makes an initramfs of about
40-60 MB; the IMA kernel's batches are smaller (its measurement list, one record with the
whole PKCS#7 per mutant, is sent back over the serial line)."""
import os
import shutil
import time

from .common import log
from .mutate import mutants, originals
from .predict import ima_kernel_view, ima_list_order, ima_predict, ima_rows, predict
from .qemu import batch_entry, boot, make_initramfs, parse_serial

BATCH = 2000
IMA_BATCH = 500


def boot_batch(name, b, k, bdir, cases, extra, args, cmdline):
    """Boots the kernel for one batch, again for the rest of it whenever a load ended a boot
    (MSC-STOPPED: the loading process was killed) or the guest stalled; (results, logs, IMA
    view data) merged over the boots, the IMA list sizes made cumulative per boot.  The IMA
    measurement list starts again with each boot: ima_kernel_view gets the boots' records
    with their offsets shifted behind one another."""
    # no_timer_check: a TCG guest on a loaded host often fails the boot-time timer check
    # ("IO-APIC + timer doesn't work") before /init; it has no bearing on module loading.
    mcmd = (cmdline + " no_timer_check").strip()
    results, logs = {}, {}
    ima = {"policy": [], "sizes": [], "list": b"", "errors": [], "t_boot": 0.0}
    rest, tries, n, broken_boots = list(cases), 0, 0, 0
    while rest and tries < 3:
        n += 1
        initrd = os.path.join(bdir, "initramfs.cpio")
        make_initramfs(initrd, rest, k["modname"], list(extra) + [batch_entry(bdir, k.get("arch"))],
                       busybox=k.get("busybox"))
        serial = os.path.join(bdir, "serial.log" if n == 1 else "serial-%d.log" % n)
        ima["t_boot"] += boot(k["vmlinuz"], initrd, serial, max(args.timeout, 2 * len(rest)), mcmd, stall=120,
                              arch=k.get("arch", "x86_64"))
        os.unlink(initrd)
        r, lg, _, release, _, im = parse_serial(serial)
        if release is None:
            log("%s: mutant batch %d: the kernel did not reach /init (%s)" % (name, b, serial))
        broken = [e for e in im["errors"] if e.startswith("crypto self-test failed")]
        if broken and broken_boots < 2:
            # The kernel of this boot is not the kernel of the others (an algorithm it has is
            # unusable): its answers are not compared; boot again.  Seen once on Debian 13's
            # 6.12 under lockdown (ECDSA refused with ELIBBAD in one boot of eight).
            broken_boots += 1
            log("%s: mutant batch %d: boot %d discarded (%s), booting again" % (name, b, n, "; ".join(broken)))
            continue
        if broken:
            log("%s: mutant batch %d: boot %d compared although %s" % (name, b, n, "; ".join(broken)))
        ima.setdefault("release", release)
        base = len(ima["list"])
        ima["list"] += im["list"] or b""
        ima["sizes"] += [(f, base + sz) for f, sz in im["sizes"]]
        ima["errors"] += im["errors"]
        results.update(r)
        logs.update(lg)
        done = [f for f, _ in rest if f in r]
        tries = 0 if done else tries + 1
        rest = [(f, d) for f, d in rest if f not in r]
        if rest:
            log("%s: mutant batch %d: %d loads left after boot %d, booting again" % (name, b, len(rest), n))
    return results, logs, ima


def run_mutants(name, k, c, args, profile, flags, extra, plain_rows, cmdline, debian_original=None, generated=None):
    """Runs args.mutants mutants of args.seed on kernel `name`: {seed, count, rows, times}.
    Each row: id ("seed:i"), class, original, kernel, modsign, agree (plus the log, insmod
    output and reason when it disagrees).  generated: instead, the cases of gen_grammar.py,
    {"originals": [names], "cases": [(id, class, original, module bytes)], "total": n}."""
    t0 = time.time()
    if generated is None:
        origs = originals(c, debian_original)
        # The Debian kernels trust only Debian's own signature; the built ones every test key.
        trusted = {"debian"} if debian_original is not None else None
        total, prefix, onames = args.mutants, "m", [n for n, _ in origs]
        batch = lambda first, count: mutants(args.seed, count, origs, first, trusted)  # noqa: E731
    else:
        total, prefix, onames = len(generated["cases"]), "g", generated["originals"]
        batch = lambda first, count: generated["cases"][first:first + count]  # noqa: E731
    t_orig = time.time() - t0
    ima = bool(k.get("ima"))
    size = args.mutant_batch or (IMA_BATCH if ima else BATCH)
    work = os.path.join(c.work, "mutants" if generated is None else "generated")
    shutil.rmtree(work, ignore_errors=True)
    release = None
    rows, times = [], {"originals": t_orig, "generate": 0.0, "predict": 0.0, "boot": 0.0, "batches": 0}
    for b, first in enumerate(range(0, total, size)):
        count = min(size, total - first)
        bdir = os.path.join(work, "b%03d" % b)
        os.makedirs(os.path.join(bdir, "cases"))
        t1 = time.time()
        cases, meta = [], {}
        for j, (mid, cls, oname, data) in enumerate(batch(first, count)):
            fname = "%s%d.ko" % (prefix, first + j)
            with open(os.path.join(bdir, "cases", fname), "wb") as f:
                f.write(data)
            cases.append((fname, data))
            meta[fname] = (mid, cls, oname)
        t2 = time.time()
        paths = [os.path.join(bdir, "cases", f) for f, _ in cases]
        if ima:
            pred = ima_predict(c.modsign, paths, k["keyring"], k["blacklist"], flags)
        else:
            pred = predict(c.modsign, profile, flags, k["keyring"], paths, k.get("blacklist"))
        t3 = time.time()
        results, logs, imainfo = boot_batch(name, b, k, bdir, cases, extra, args, cmdline)
        t_boot = imainfo.pop("t_boot")
        release = release or imainfo.pop("release", None)
        descs = {f: meta[f][1] for f in meta}
        if ima:
            _, view = ima_kernel_view(imainfo, cases, ima_list_order(flags))
            brows = ima_rows(cases, descs, results, logs, pred, view)
        else:
            brows = plain_rows(cases, descs, results, logs, pred)
        for (fname, _), r in zip(cases, brows):
            mid, cls, oname = meta[fname]
            row = {"id": mid, "class": cls, "original": oname, "kernel": r["kernel"], "modsign": r["modsign"],
                   "agree": r["agree"]}
            if not r["agree"]:
                row.update({"log": r["log"], "insmod": r["insmod"], "reason": r["reason"], "taint": r["taint"]})
            rows.append(row)
        times["generate"] += t2 - t1
        times["predict"] += t3 - t2
        times["boot"] += t_boot
        times["batches"] += 1
        bad = sum(not r["agree"] for r in brows)
        log("%s: %s %d-%d: %d/%d agree; generate %.0f s, predict %.0f s, boot %.0f s" % (
            name, "mutants" if generated is None else "generated cases", first, first + count - 1, count - bad, count, t2 - t1, t3 - t2, t_boot))
        if not bad:  # keep the serial logs (the kernel's answers); the cases of a batch that disagreed
            shutil.rmtree(os.path.join(bdir, "cases"), ignore_errors=True)
    times["total"] = time.time() - t0
    rel = release
    for r in rows:
        if not r["agree"]:
            log("  MUTANT DISAGREES %s %s (%s): kernel %s, modsign %s (%s)" % (
                r["id"], r["class"], r["original"], r["kernel"], r["modsign"], r.get("reason")))
    out = {"seed": args.seed, "count": total, "originals": onames, "rows": rows, "times": times, "release": rel}
    if generated is not None:
        out["total"] = generated["total"]
    return out
