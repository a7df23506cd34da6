#!/usr/bin/env bash
# bench/ima-floor.sh [--files N] [--runs R]: IMA signing and verifying at the floor (issue 28)
# `modsign ima sign` and `ima verify` against their floors, everything in one run per
# repetition, over N files drawn from this machine's /usr (bench/usr-sample.sh; the sample
# bench/ima-speed.sh uses):
#   modsign   ima sign -q with each output (--sigfile, --setxattr, --manifest) and ima
#             verify -q (FILE.sig and security.ima), --jobs 1 and 2, for ECDSA P-384 (v2),
#             RSA-4096 (v2) and ML-DSA-44/65/87 (v3); wall and CPU time (user + sys).
#   crypto    (modsign_bench, CPU time, this run): N x one signature (or verification) at the
#             faster backend + the tree's bytes at SHA-256's rate (OpenSSL, 1 MiB pieces).
#   I/O       (bench/io_floor, this run): open and read every file in 1 MiB pieces, and the output's own
#             work: FILE.sig written with --sync batch's durability, security.ima set with
#             fsetxattr (the value's size), nothing (manifest); for verify FILE.sig or
#             security.ima read.  Its wall and CPU time.
#   floor     max(crypto / jobs, I/O wall), as bench/sign-floor.sh states it for modules;
#             efficiency = floor / modsign wall.  Also against (crypto + I/O CPU) / jobs.
# Every command runs against a warm page cache, after a global `sync`.  The table gives the
# median over R (default 3) with the single values in brackets.  A value the file system
# cannot hold as security.ima (ML-DSA-87's 4,636 bytes on ext4 with 4 KiB blocks) leaves
# its setxattr rows out ("—").  Beside each ML-DSA `auto` run it also times `--backend
# openssl` (the table's gain).
# Needs: root (security.ima), modsign, modsign_bench (Google Benchmark) and io_floor built,
# python3, GNU time (/usr/bin/time); disk for the sample twice (the cache and a copy under
# /tmp; 250 MiB for 5,000 files here).  About 5 minutes per repetition on a 2-core machine.
# Run it on a quiet machine: other work changes every figure.
# MODSIGN, BENCH, IO_FLOOR: the binaries (default: build/bin/ of this checkout).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/usr-sample.sh
usr_sample_args "$@"  # sets nfiles, runs
modsign=${MODSIGN:-$PWD/build/bin/modsign}
bench=${BENCH:-$PWD/build/bin/modsign_bench}
iofloor=${IO_FLOOR:-$PWD/build/bin/io_floor}
for b in "$modsign" "$bench" "$iofloor"; do
  [ -x "$b" ] || { echo "$b: not built (cmake --build build --target modsign modsign_bench io_floor)" >&2; exit 3; }
done
[ "$(id -u)" = 0 ] || { echo "security.ima needs root (CAP_SYS_ADMIN)" >&2; exit 3; }

w=$(mktemp -d /tmp/modsign-ima-floor.XXXXXX); trap 'rm -rf "$w"' EXIT
usr_sample "$w/t" "$nfiles"  # the tree in $w/t; sets F (its files, sorted), n, bytes, sizes
printf '%s\n' "${F[@]}" >"$w/list"
algs=(ecdsa-p384 rsa-4096 ml-dsa-44 ml-dsa-65 ml-dsa-87)
for a in "${algs[@]}"; do
  "$modsign" keygen --algo "$a" --out "$w/$a.pem" --cert-out "$w/$a.crt" >/dev/null
done

now() { date +%s.%N; }
R=$w/results; : >"$R"
warm() { cat "${F[@]}" >/dev/null; }
nosig() { find "$w/t" -name '*.sig' -type f -delete; sync; }
# timed RUN ALG NAME CMD...: wall and CPU (user + sys) of CMD, which must succeed.
timed() {
  local run=$1 a=$2 name=$3 t0 t1; shift 3
  sync; warm
  t0=$(now)
  /usr/bin/time -f '%U %S' -o "$w/cpu" "$@" >"$w/out" 2>"$w/err" || { cat "$w/err" >&2; echo "$name failed" >&2; exit 1; }
  t1=$(now)
  echo "$run $a $name $(python3 -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$t0" "$t1") $(cat "$w/cpu")" >>"$R"
}
rates() {  # "name seconds-per-op" or "name bytes-per-second", CPU time
  "$bench" --benchmark_min_time=0.5 --benchmark_format=json \
    --benchmark_filter='BM_Raw(Sign|Verify)/(mldsa(44|65|87)_(openssl|botan)|rsa4096|ecdsa_p384)$|BM_Digest/sha256$' \
    2>/dev/null | python3 -c '
import json, sys
for b in json.load(sys.stdin)["benchmarks"]:
    if b.get("error_occurred"): continue
    if "bytes_per_second" in b: print(b["name"], b["bytes_per_second"])
    else: print(b["name"], b["cpu_time"] * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3}[b["time_unit"]])'
}
sigsize() { stat -c %s "${F[0]}.sig"; }

for run in $(seq "$runs"); do
  rates | sed "s/^/$run rate /" >>"$R"
  for a in "${algs[@]}"; do
    ms=("$modsign" ima)
    key=(--key "$w/$a.pem" --cert "$w/$a.crt")
    for j in 1 2; do
      nosig
      timed "$run" "$a" "sign_sigfile_j$j" "${ms[@]}" sign "${key[@]}" --sigfile -q -j $j "${F[@]}"
      timed "$run" "$a" "verify_sigfile_j$j" "${ms[@]}" verify --keyring "$w/$a.crt" --sigfile -q -j $j "${F[@]}"
      case $a in ml-dsa-*)  # the library IMA verified with before issue 28 (always OpenSSL)
        timed "$run" "$a" "verify_sigfile_openssl_j$j" "${ms[@]}" verify --keyring "$w/$a.crt" --sigfile --backend openssl -q -j $j "${F[@]}" ;;
      esac
      s=$(sigsize)
      echo "$run $a sigsize $s" >>"$R"
      nosig
      timed "$run" "$a" "io_sign_sigfile_j$j" "$iofloor" --list "$w/list" --piece 1048576 --jobs $j --suffix .sig --out-size "$s"
      timed "$run" "$a" "io_verify_sigfile_j$j" "$iofloor" --list "$w/list" --piece 1048576 --jobs $j --read-only --read-suffix .sig
      nosig
      # A value the file system cannot hold (ext4 with 4 KiB blocks and no ea_inode: about
      # 4,000 bytes, so not ML-DSA-87's 4,636; what `modsign ima fit` says) is left out.
      if python3 -c 'import os, sys; os.setxattr(sys.argv[1], "security.ima", bytes(int(sys.argv[2])))' "${F[0]}" "$s" 2>/dev/null; then
        timed "$run" "$a" "io_sign_setxattr_j$j" "$iofloor" --list "$w/list" --piece 1048576 --jobs $j --xattr security.ima --out-size "$s"
        timed "$run" "$a" "sign_setxattr_j$j" "${ms[@]}" sign "${key[@]}" --setxattr -q -j $j "${F[@]}"
        timed "$run" "$a" "verify_setxattr_j$j" "${ms[@]}" verify --keyring "$w/$a.crt" -q -j $j "${F[@]}"
        timed "$run" "$a" "io_verify_setxattr_j$j" "$iofloor" --list "$w/list" --piece 1048576 --jobs $j --read-only --xattr security.ima
      fi
      timed "$run" "$a" "sign_manifest_j$j" "${ms[@]}" sign "${key[@]}" --manifest "$w/manifest" -q -j $j "${F[@]}"
      timed "$run" "$a" "io_sign_manifest_j$j" "$iofloor" --list "$w/list" --piece 1048576 --jobs $j --read-only
      # the library IMA used before issue 28 (always OpenSSL), same run: the table's gain
      case $a in ml-dsa-*)
        timed "$run" "$a" "sign_manifest_openssl_j$j" "${ms[@]}" sign "${key[@]}" --manifest "$w/manifest" --backend openssl -q -j $j "${F[@]}" ;;
      esac
    done
  done
done

python3 - "$R" "$n" "$bytes" "$runs" "$sizes" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)" <<'PY'
import statistics, sys
path, n, nbytes, runs, sizes, cpus, load = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6], sys.argv[7]
wall, cpu, rate, sig = {}, {}, {}, {}
for line in open(path):
    f = line.split()
    run = int(f[0])
    if f[1] == "rate":
        rate.setdefault(run, {})[f[2]] = float(f[3])
    elif f[2] == "sigsize":
        sig.setdefault(run, {})[f[1]] = int(f[3])
    else:
        wall.setdefault(run, {})[(f[1], f[2])] = float(f[3])
        cpu.setdefault(run, {})[(f[1], f[2])] = float(f[4]) + float(f[5])
algs = ["ecdsa-p384", "rsa-4096", "ml-dsa-44", "ml-dsa-65", "ml-dsa-87"]
bm = {"ecdsa-p384": ["ecdsa_p384"], "rsa-4096": ["rsa4096"], "ml-dsa-44": ["mldsa44_openssl", "mldsa44_botan"],
      "ml-dsa-65": ["mldsa65_openssl", "mldsa65_botan"], "ml-dsa-87": ["mldsa87_openssl", "mldsa87_botan"]}
med = statistics.median
runs_ = sorted(wall)
def op(run, a, what):  # seconds per signature / verification at the faster backend
    return min(rate[run][f"BM_Raw{what}/{b}"] for b in bm[a])
def hash_s(run):
    return nbytes / rate[run]["BM_Digest/sha256"]
def cell(vals, fmt="{:.2f}"):
    if not vals:
        return "—"
    s = fmt.format(med(vals))
    return s + (f" ({', '.join(fmt.format(v) for v in vals)})" if len(vals) > 1 else "")
print(f"{n} files from /usr, {nbytes / 2**20:.1f} MiB ({sizes}); {cpus} CPUs, load average at the end {load}; "
      f"median of {runs} repetition(s), single values in brackets")
print(f"- SHA-256 (OpenSSL, 1 MiB pieces): {cell([rate[r]['BM_Digest/sha256'] / 1e6 for r in runs_], '{:.0f}')} MB/s; "
      f"the tree's bytes: {cell([hash_s(r) for r in runs_])} s")
print()
print("| per operation, µs (faster backend) | " + " | ".join(algs) + " |")
print("|---|" + "---|" * len(algs))
for what in ("Sign", "Verify"):
    print(f"| {what.lower()} | " + " | ".join(cell([op(r, a, what) * 1e6 for r in runs_], "{:.0f}") for a in algs) + " |")
print("| value bytes | " + " | ".join(str(sig[runs_[0]][a]) for a in algs) + " |")
print()
for verb, outs in (("sign", ["sigfile", "setxattr", "manifest"]), ("verify", ["sigfile", "setxattr"])):
    what = "Sign" if verb == "sign" else "Verify"
    print(f"**ima {verb}**")
    print()
    print("| | " + " | ".join(algs) + " |")
    print("|---|" + "---|" * len(algs))
    def row(label, fn, fmt="{:.2f}"):
        def vals(a):
            try:
                return [fn(r, a) for r in runs_]
            except KeyError:  # left out: the value does not fit this file system
                return []
        print(f"| {label} | " + " | ".join(cell(vals(a), fmt) for a in algs) + " |")
    crypto = lambda r, a, what=what: n * op(r, a, what) + hash_s(r)
    row("crypto floor, 1 core, s (signatures + SHA-256)", crypto)
    row("... of it signatures, s", lambda r, a, what=what: n * op(r, a, what))
    for o in outs:
        for j in (1, 2):
            k, io = f"{verb}_{o}_j{j}", f"io_{verb}_{o}_j{j}"
            W = lambda r, a, k=k: wall[r][(a, k)]
            I = lambda r, a, io=io: wall[r][(a, io)]
            IC = lambda r, a, io=io: cpu[r][(a, io)]
            floor = lambda r, a, j=j, I=I: max(crypto(r, a) / j, I(r, a))
            row(f"{o} -j{j}: modsign, s", W)
            row(f"{o} -j{j}: its CPU user+sys, s", lambda r, a, k=k: cpu[r][(a, k)])
            row(f"{o} -j{j}: I/O floor (wall), s", I)
            row(f"{o} -j{j}: floor max(crypto/{j}, I/O), s", floor)
            row(f"**{o} -j{j}: efficiency floor / modsign**", lambda r, a, W=W, floor=floor: floor(r, a) / W(r, a))
            row(f"{o} -j{j}: efficiency against (crypto + I/O CPU)/{j}",
                lambda r, a, W=W, IC=IC, j=j: max(crypto(r, a) / j, (crypto(r, a) + IC(r, a)) / j) / W(r, a))
        row(f"{o}: second core (-j1 / -j2)", lambda r, a, o=o: wall[r][(a, f"{verb}_{o}_j1")] / wall[r][(a, f"{verb}_{o}_j2")], "{:.2f}x")
    print()
print("The table's gain: the same commands with --backend openssl (what ima sign and verify always used before issue 28), same repetition:")
print()
print("| | " + " | ".join(algs[2:]) + " |")
print("|---|" + "---|" * 3)
for k, label in (("sign_manifest", "sign --manifest"), ("verify_sigfile", "verify --sigfile")):
    for j in (1, 2):
        print(f"| {label} -j{j}: openssl / auto | " + " | ".join(
            cell([wall[r][(a, f"{k}_openssl_j{j}")] / wall[r][(a, f"{k}_j{j}")] for r in runs_], "{:.2f}x") for a in algs[2:]) + " |")
print()
print("Verify split for the seeds' question (-j1, FILE.sig): hashing = bytes / SHA-256 rate, signatures = N x one verification;")
for a in algs:
    h = med([hash_s(r) for r in runs_]); s = med([n * op(r, a, "Verify") for r in runs_])
    m = med([wall[r][(a, "verify_sigfile_j1")] for r in runs_])
    print(f"- {a}: modsign {m:.2f} s; floor hashing {h:.2f} s + signatures {s:.2f} s; rest (I/O, parsing, kernel) {m - h - s:.2f} s")
PY
