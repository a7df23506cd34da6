#!/usr/bin/env bash
# bench/sign-floor.sh [--quick] [--runs R] [--modules N] [--signed-attrs]
# Issue 18: batch signing over the Debian cloud kernel's modules (tools/fetch-debian-kernel,
# cached) against the kernel's own scripts/sign-file, and against the floor, in one run.
#   baseline  scripts/sign-file of linux-source-7.2 (the cached source of
#             tools/build-test-kernel), compiled here against the bootstrapped OpenSSL of
#             this build into $MODSIGN_CACHE/bench/ (not into the checkout), run once per
#             module: detached (-d, MODULE.p7s) and in place.  sign-file makes ML-DSA CMS
#             with signedAttrs (OpenSSL 3.5 cannot do without them), RSA without.
#   modsign   modsign sign --hash sha512 -q -r TREE, --p7s-only (detached) and in place,
#             --jobs 1 and --jobs 2, default --sync batch.  Its form is the one a default
#             7.x kernel loads (no signedAttrs; ML-DSA with external μ); --signed-attrs
#             makes modsign use sign-file's form for ML-DSA instead.
#   pairs     within one repetition every sign-file loop is followed (odd repetitions) or
#             preceded (even ones) by the modsign runs of the same mode, on fresh copies of
#             the tree with a warm page cache; each ratio is taken inside its repetition;
#             the tables give the median over R repetitions (all values in parentheses).
#   crypto    the floor of the computation, measured in the same run (build/bin/
#             modsign_bench, CPU time): N x one signature at the faster backend (ML-DSA-65:
#             Botan or OpenSSL; RSA-4096: OpenSSL) + the tree's bytes at the faster
#             library's rate of the hash the form needs (SHAKE256 for the external μ,
#             SHA-512 with signedAttrs and for RSA); at --jobs 2 half of it, and beside it
#             the machine's own two-thread signing throughput (BM_RawSignThreads).
#   I/O       the floor of the file work: build/bin/io_floor reads every module and writes
#             one output per module (detached: the CMS size; in place: the module's size)
#             with the durability of --sync batch (temporary file, fsync and rename on 8
#             committer threads, each directory fsynced once), --jobs 1 and 2.
#   floor     max(crypto / jobs, I/O at that job count); efficiency = floor / modsign's
#             time, and against each floor separately; second-core factor = time at
#             --jobs 1 / time at --jobs 2 (target >= 1.8).
#   verify    modsign verify -r over the tree signed in place (--jobs 1, 2) against a loop
#             of `openssl cms -verify` (as bench/batch-compare.sh; ML-DSA-65 with
#             signedAttrs, verified with the 7.0 waiver); floor: N verifications + the
#             bytes at the hash rate, I/O: io_floor --read-only.  Target >= 50x.
# Full mode: every module, R = 5 (about 15 minutes on 2 CPUs).  --quick: 100 modules,
# R = 1 (for checking the script; the figures mean nothing).  Wall times need a quiet
# machine: the load average is printed with the results.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=5; n=0; attrs=0
while [ $# -gt 0 ]; do
  case $1 in
    --quick) runs=1; n=100 ;;
    --runs) runs=$2; shift ;;
    --modules) n=$2; shift ;;
    --signed-attrs) attrs=1 ;;
    *) echo "usage: $0 [--quick] [--runs R] [--modules N] [--signed-attrs]" >&2; exit 2 ;;
  esac
  shift
done
modsign=$PWD/build/bin/modsign
bench=$PWD/build/bin/modsign_bench
io_floor=$PWD/build/bin/io_floor
openssl=$(sed -n 's/^MODSIGN_OPENSSL_BIN:FILEPATH=//p' build/CMakeCache.txt)
[ -x "$modsign" ] && [ -x "$openssl" ] && [ -x "$bench" ] && [ -x "$io_floor" ] ||
  { echo "build modsign, modsign_bench and io_floor first (cmake --build build --target modsign modsign_bench io_floor)" >&2; exit 3; }
ossl_root=$(cd "$(dirname "$openssl")/.." && pwd)

# --- scripts/sign-file, built from the cached kernel source ----------------------------
cache=${MODSIGN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/modsign}
ksrc=$cache/kernel-src/linux-source-7.2
[ -f "$ksrc/scripts/sign-file.c" ] ||
  { echo "$ksrc/scripts/sign-file.c missing: tools/build-test-kernel fetches linux-source-7.2 once" >&2; exit 3; }
sfdir=$cache/bench/sign-file-7.2-$(basename "$ossl_root")
signfile=$sfdir/sign-file
if [ ! -x "$signfile" ] || [ "$ksrc/scripts/sign-file.c" -nt "$signfile" ]; then
  mkdir -p "$sfdir"
  # The kernel's own flags (scripts/Makefile: HOSTCFLAGS_sign-file.o, HOSTLDLIBS_sign-file).
  ${CC:-cc} -O2 -I"$ksrc/tools/include/uapi" -I"$ossl_root/include" -o "$signfile.tmp" "$ksrc/scripts/sign-file.c" \
    -L"$ossl_root/lib" -Wl,-rpath,"$ossl_root/lib" -lcrypto 2>"$sfdir/build.log" ||
    { cat "$sfdir/build.log" >&2; exit 3; }
  mv "$signfile.tmp" "$signfile"
fi

w=$(mktemp -d /tmp/modsign-floor.XXXXXX); trap 'rm -rf "$w"' EXIT
. bench/tree.sh
bench_tree "$w" "$n"  # the unsigned tree in $w/src, the keys; sets n, bytes

now() { date +%s.%N; }
R=$w/results; : >"$R"
# timed RUN KEY NAME CMD...: wall (date) and CPU (user + sys, children included) of CMD.
timed() {
  local run=$1 k=$2 name=$3; shift 3
  sync
  local t0 t1
  t0=$(now)
  /usr/bin/time -f '%U %S' -o "$w/cpu" "$@" >"$w/out" 2>"$w/err" || { cat "$w/err" >&2; echo "$name failed" >&2; exit 1; }
  t1=$(now)
  echo "$run $k $name $(python3 -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$t0" "$t1") $(cat "$w/cpu")" >>"$R"
}
sf_loop() {  # sf_loop [-d] KEY CERT FILE...: sign-file once per module
  local d=()
  [ "$1" = -d ] && { d=(-d); shift; }
  local key=$1 cert=$2; shift 2
  for m; do "$signfile" "${d[@]}" sha512 "$key" "$cert" "$m"; done
}
export -f sf_loop; export signfile

# --- crypto rates, measured in this run (CPU time per operation) ------------------------
rates() {  # one line: "name value" per rate
  "$bench" --benchmark_min_time=0.5 --benchmark_format=json \
    --benchmark_filter='BM_Raw(Sign|Verify)/(mldsa65_(openssl|botan)|rsa4096)$|BM_RawSignThreads|BM_Shake256(/|Threads)|BM_Digest(Botan)?/sha512$' \
    2>/dev/null | python3 -c '
import json, sys
for b in json.load(sys.stdin)["benchmarks"]:
    if b.get("error_occurred"): continue
    s = b["cpu_time"] * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3}[b["time_unit"]]
    name = b["name"]
    if "Threads" in name:  # throughput over the threads, by wall time
        v = b.get("items_per_second") or b.get("bytes_per_second")
        print(name.replace("/real_time", ""), v)
    elif "bytes_per_second" in b: print(name, b["bytes_per_second"])
    else: print(name, s)'
}

for run in $(seq "$runs"); do
  rates | sed "s/^/$run rate /" >>"$R"
  for k in ml rsa; do
    mflags=(--key "$w/$k.pem" --cert "$w/$k.crt" --hash sha512 -q)
    [ "$attrs" = 1 ] && [ "$k" = ml ] && mflags+=(--signed-attrs)
    for mode in p7s inplace; do
      fresh "$w/a"; fresh "$w/b"
      mapfile -t A < <(find "$w/a" -name '*.ko' | sort)
      find "$w/b" -name '*.ko' | sort >"$w/list"
      sfd=(); mopt=(); [ $mode = p7s ] && { sfd=(-d); mopt=(--p7s-only); }
      modsign_runs() {
        for j in 1 2; do
          [ $mode = inplace ] && [ $j = 2 ] && fresh "$w/b"
          timed "$run" "$k" "m_${mode}_j$j" "$modsign" sign "${mflags[@]}" "${mopt[@]}" --jobs $j -r "$w/b"
          [ $mode = p7s ] && [ $j = 1 ] && { cms_size=$(stat -c %s "$(head -n1 "$w/list").p7s"); find "$w/b" -name '*.p7s' -delete; }
        done
        return 0
      }
      [ $((run % 2)) = 0 ] && modsign_runs
      timed "$run" "$k" "sf_$mode" bash -c 'sf_loop "$@"' _ "${sfd[@]}" "$w/$k.pem" "$w/$k.crt" "${A[@]}"
      [ $((run % 2)) = 1 ] && modsign_runs
      # the I/O floor over the same tree (b holds the modules, and with p7s their .p7s)
      for j in 1 2; do
        find "$w/b" -name '*.p7s' -delete
        if [ $mode = p7s ]; then
          timed "$run" "$k" "io_${mode}_j$j" "$io_floor" --list "$w/list" --jobs $j --suffix .p7s --out-size "$cms_size"
        else
          timed "$run" "$k" "io_${mode}_j$j" "$io_floor" --list "$w/list" --jobs $j
        fi
      done
      # the same with 32 committer threads instead of CommitBatch's 8: whether more
      # concurrent fsyncs (grouped into fewer journal commits) would lower the floor
      find "$w/b" -name '*.p7s' -delete
      osz=(); [ $mode = p7s ] && osz=(--suffix .p7s --out-size "$cms_size")
      timed "$run" "$k" "io_${mode}_j2_c32" "$io_floor" --list "$w/list" --jobs 2 --committers 32 "${osz[@]}"
    done
    # verify: the tree signed in place (RSA-4096 without signedAttrs, the form the kernel
    # loads; ML-DSA-65 with signedAttrs, which OpenSSL 3.5 needs, and the 7.0 waiver)
    fresh "$w/a"; fresh "$w/b"
    sflags=(); vflags=()
    [ "$k" = ml ] && { sflags=(--signed-attrs); vflags=(--waive-mldsa-authattrs); }
    "$modsign" sign --key "$w/$k.pem" --cert "$w/$k.crt" --hash sha512 "${sflags[@]}" --p7s -q -r "$w/b"
    mapfile -t A < <(find "$w/a" -name '*.ko' | sort)
    ov() {
      local fail=0
      for m in "${A[@]}"; do
        "$openssl" cms -verify -binary -inform DER -in "$w/b/${m#"$w/a/"}.p7s" -content "$m" -certfile "$w/$k.crt" \
          -nointern -noverify -out /dev/null 2>/dev/null || fail=$((fail + 1))
      done
      [ $fail = 0 ] || { echo "openssl cms -verify failed for $fail modules ($k)" >&2; return 1; }
    }
    export -f ov; export w k openssl
    timed "$run" "$k" o_verify bash -c 'A=("$@"); ov' _ "${A[@]}"
    for j in 1 2; do
      timed "$run" "$k" "m_verify_j$j" "$modsign" verify --cert "$w/$k.crt" "${vflags[@]}" -q -r "$w/b" --jobs $j
      [ ! -s "$w/out" ] || { echo "modsign verify reported problems:" >&2; head "$w/out" >&2; exit 1; }
      timed "$run" "$k" "io_verify_j$j" "$io_floor" --list "$w/list" --jobs $j --read-only
    done
  done
done

python3 - "$R" "$n" "$bytes" "$runs" "$attrs" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)" <<'PY'
import statistics, sys
path, n, nbytes, runs, attrs, cpus, load = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1", sys.argv[6], sys.argv[7]
wall, cpu, rate = {}, {}, {}
for line in open(path):
    f = line.split()
    run = int(f[0])
    if f[1] == "rate":
        rate.setdefault(run, {})[f[2]] = float(f[3])
        continue
    wall.setdefault(run, {})[(f[1], f[2])] = float(f[3])
    cpu.setdefault(run, {})[(f[1], f[2])] = float(f[4]) + float(f[5])
med = statistics.median
def r(run, name):
    return rate[run].get(name)
def best_sign(run, k):
    if k == "rsa": return r(run, "BM_RawSign/rsa4096")
    return min(v for v in (r(run, "BM_RawSign/mldsa65_botan"), r(run, "BM_RawSign/mldsa65_openssl")) if v)
def best_verify(run, k):
    if k == "rsa": return r(run, "BM_RawVerify/rsa4096")
    return min(v for v in (r(run, "BM_RawVerify/mldsa65_botan"), r(run, "BM_RawVerify/mldsa65_openssl")) if v)
def hash_rate(run, k, attrs_form):
    if k == "ml" and not attrs_form:
        return max(v for v in (r(run, "BM_Shake256/openssl"), r(run, "BM_Shake256/botan")) if v)
    return max(v for v in (r(run, "BM_Digest/sha512"), r(run, "BM_DigestBotan/sha512")) if v)
def crypto(run, k):  # one core, s
    return n * best_sign(run, k) + nbytes / hash_rate(run, k, attrs)
def crypto_verify(run, k):  # verify: ML-DSA with signedAttrs (SHA-512), RSA SHA-512
    return n * best_verify(run, k) + nbytes / hash_rate(run, k, True)
def two_thread_factor(run, k):
    name = "BM_RawSignThreads/" + ("mldsa65_botan" if k == "ml" else "rsa4096")
    one, two = r(run, name + "/threads:1"), r(run, name + "/threads:2")
    return two / one if one and two else float("nan")
def cell(fn, k, fmt):
    vals = []
    for run in sorted(wall):
        try: vals.append(fn(run, k))
        except (KeyError, TypeError, ValueError): pass
    if not vals: return "—"
    s = fmt.format(med(vals))
    return s + (f" ({', '.join(fmt.format(v) for v in vals)})" if len(vals) > 1 else "")
def row(label, fn, target="", fmt="{:.2f}"):
    print(f"| {label} | {cell(fn, 'ml', fmt)} | {cell(fn, 'rsa', fmt)} | {target} |")
W = lambda name: (lambda run, k: wall[run][(k, name)])
C = lambda name: (lambda run, k: cpu[run][(k, name)])
print(f"{n} modules, {nbytes / 2**20:.1f} MiB, {cpus} CPUs, load average at the end {load}; median of {runs} repetition(s); "
      f"modsign form: {'ML-DSA with signedAttrs (as sign-file)' if attrs else 'no signedAttrs (what a default 7.x kernel loads; sign-file makes ML-DSA with signedAttrs)'}, sha512")
print()
print("| | ML-DSA-65 | RSA-4096 | target |")
print("|---|---|---|---|")
row("signature, ms (fastest backend, CPU time)", lambda run, k: best_sign(run, k) * 1e3, "", "{:.3f}")
row("hash the form needs, MB/s (fastest library)", lambda run, k: hash_rate(run, k, attrs) / 1e6, "", "{:.0f}")
row("**crypto floor, 1 core, s**", crypto)
row("machine's 2-thread signing throughput / 1 thread", two_thread_factor, "", "{:.2f}x")
for mode, label in (("p7s", "detached (--p7s-only / sign-file -d)"), ("inplace", "in place")):
    print(f"| **{label}** | | | |")
    row("sign-file loop, s", W(f"sf_{mode}"))
    for j in (1, 2):
        m = W(f"m_{mode}_j{j}")
        io = W(f"io_{mode}_j{j}")
        row(f"modsign --jobs {j}, s", m)
        row(f"... CPU time user+sys, s", C(f"m_{mode}_j{j}"))
        row(f"**ratio sign-file / modsign --jobs {j}**", lambda run, k, m=m: W(f"sf_{mode}")(run, k) / m(run, k), "", "{:.1f}x")
        row(f"I/O floor --jobs {j}, s", io)
        floor = lambda run, k, io=io, j=j: max(crypto(run, k) / j, io(run, k))
        row(f"floor = max(crypto/{j}, I/O), s", floor)
        row(f"**efficiency floor / modsign --jobs {j}**", lambda run, k, m=m, floor=floor: floor(run, k) / m(run, k), "≥ 0.85")
        row(f"efficiency against crypto/{j} alone", lambda run, k, m=m, j=j: crypto(run, k) / j / m(run, k))
        row(f"efficiency against I/O alone", lambda run, k, m=m, io=io: io(run, k) / m(run, k))
        # The I/O work takes CPU too (system time: page-cache copies, ext4 and its journal),
        # on the same cores as the signing: (crypto + I/O CPU time) / jobs bounds from below
        # as well.
        ioc = C(f"io_{mode}_j{j}")
        floor_cpu = lambda run, k, io=io, ioc=ioc, j=j: max(crypto(run, k) / j, io(run, k), (crypto(run, k) + ioc(run, k)) / j)
        row(f"efficiency against max(floor, (crypto + I/O CPU)/{j})", lambda run, k, m=m, f=floor_cpu: f(run, k) / m(run, k))
    row("I/O floor --jobs 2 with 32 committers (modsign: 8), s", W(f"io_{mode}_j2_c32"))
    row("**second-core factor (--jobs 1 / --jobs 2)**", lambda run, k: W(f"m_{mode}_j1")(run, k) / W(f"m_{mode}_j2")(run, k), "≥ 1.8", "{:.2f}x")
    row("efficiency by CPU time, --jobs 1 (crypto / user+sys)", lambda run, k: crypto(run, k) / C(f"m_{mode}_j1")(run, k))
print("| **verify** | | | |")
row("openssl cms -verify loop, s", W("o_verify"))
for j in (1, 2):
    m = W(f"m_verify_j{j}")
    row(f"modsign verify --jobs {j}, s", m)
    row(f"**verify ratio --jobs {j}**", lambda run, k, m=m: W("o_verify")(run, k) / m(run, k), "≥ 50x" if j == 2 else "", "{:.1f}x")
    floor = lambda run, k, j=j: max(crypto_verify(run, k) / j, W(f"io_verify_j{j}")(run, k))
    row(f"verify floor = max(crypto/{j}, read I/O), s", floor)
    row(f"verify efficiency --jobs {j}", lambda run, k, m=m, floor=floor: floor(run, k) / m(run, k))
PY
