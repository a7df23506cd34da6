#!/usr/bin/env bash
# bench/botan-trial.sh [build|bench|isa|all] [--runs R]
# Issue 18: Botan 3.13 (Debian unstable's botan3 source package) with its CPU-specific
# modules against the Botan 3.7.1 of tools/bootstrap-deps, in one run (not a dependency
# switch: the figures decide, bench/RESULTS.md "Botan 3.13 trial (issue 18)").
#   build  fetches the source package of suite unstable through the project's private apt
#          configuration (tools/lib/apt-private.sh, its own lists under the trial's
#          directory) into $MODSIGN_CACHE/bench/botan-3.13/ and builds a static, -fPIC
#          Botan there: bootstrap-deps' module list for 3.7.1 plus every CPU-specific module
#          that 3.13 offers for ML-DSA, Keccak/SHAKE and SHA-2 on x86-64 (from its
#          `configure.py --list-modules`; those the compiler or the CPU cannot use are
#          left out by configure.py itself), `nice -n 10`, -j2.  Then it configures a
#          modsign build against it in build-botan313/ (the same options as build/
#          otherwise) and builds modsign and modsign_bench there.
#   bench  first the whole tree signed by both with --deterministic (the bytes must be the
#          same), then R repetitions (default 5) with the two builds alternating (3.7.1
#          first for the rates and last for the tree in odd repetitions, the other way
#          round in even ones): ML-DSA-65 sign and verify, SHAKE256 (Botan's and
#          OpenSSL's) from build*/bin/modsign_bench (CPU time per operation), and
#          `modsign sign --p7s-only --hash sha512` -j1 and -j2 over the tree of
#          bench/sign-floor.sh (bench/tree.sh, every module), wall time on fresh copies
#          with a warm page cache; 3.13/3.7.1 ratios taken inside each repetition, medians
#          printed as one Markdown table with the load average before and after.
#   isa    R repetitions of the Botan rates alone, 3.7.1 / 3.13 / 3.13 with its AVX-512
#          code switched off at run time (BOTAN_CLEAR_CPUID=avx512: Keccak then takes its
#          BMI2 permutation, as in 3.7.1), medians in MiB/s and operations/s.
# Needs build/ (Botan 3.7.1, as the working rules configure it) with modsign and
# modsign_bench built.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}; [ $# -gt 0 ] && shift
runs=5
while [ $# -gt 0 ]; do
  case $1 in
    --runs) runs=$2; shift ;;
    *) echo "usage: $0 [build|bench|isa|all] [--runs R]" >&2; exit 2 ;;
  esac
  shift
done
log() { echo "botan-trial: $*" >&2; }
cache=${MODSIGN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/modsign}
top=$cache/bench/botan-3.13
root=$top/install
b313=$PWD/build-botan313

build() {
  # shellcheck source=../tools/lib/apt-private.sh disable=SC1091
  . tools/lib/apt-private.sh
  mkdir -p "$top"
  apt_private_setup "$top/apt" unstable deb-src
  local v
  v=$(apt_private_cache "$top/apt" showsrc botan3 2>/dev/null | awk '/^Version:/ { print $2 }' | sort -V | tail -n1)
  case "$v" in 3.13*) ;; *) log "suite unstable has botan3 $v, not 3.13.x"; exit 1 ;; esac
  local d=$top/src-$v s
  if [ ! -f "$d/.unpacked" ]; then
    rm -rf "$d"; mkdir -p "$d"
    # only the upstream tarball is used (as bootstrap-deps does); a .dsc the mirror has
    # already replaced does not matter
    (cd "$d" && apt_private_get "$top/apt" source --download-only "botan3=$v" >&2) || true
    local orig
    orig=$(find "$d" -maxdepth 1 -name '*.orig.tar.*' | head -n1)
    [ -n "$orig" ] || { log "no upstream tarball for botan3 $v"; exit 1; }
    mkdir -p "$d/src"; tar -xf "$orig" -C "$d/src" --strip-components=1
    touch "$d/.unpacked"
  fi
  s=$d/src
  if [ ! -f "$root/.done" ] || [ "$(cat "$root/.done")" != "$v" ]; then
    # bootstrap-deps' list for 3.7.1 ...
    local mods=ml_dsa,x509,pem,pubkey,system_rng,auto_rng,hmac_drbg,hmac,sha2_32,sha2_64,sha3,shake,shake_xof
    mods=$mods,keccak_perm_bmi2,sha2_32_x86,sha2_32_bmi2,sha2_64_bmi2,sha1,rsa,ecdsa,emsa_pkcs1
    # ... plus 3.13's CPU-specific modules for ML-DSA, Keccak/SHAKE, SHA-2 (and SHA-1)
    # (3.13 has no ML-DSA-specific SIMD module: its ML-DSA is generic code over the Keccak
    # permutation, which has BMI2 and AVX-512 variants; SHA-2/SHA-1 have x86, AVX2,
    # AVX-512 and SIMD ones; configure.py adds the simd_* modules they require)
    local all cpu m keep=()
    all=$(cd "$s" && python3 ./configure.py --list-modules)
    cpu=$(grep -E '^(keccak_perm|sha2_32|sha2_64|sha1)_' <<<"$all" | grep -v armv8 | paste -sd, -)
    [ -n "$cpu" ] && mods=$mods,$cpu
    # 3.7.1's sha2_32_bmi2/sha2_64_bmi2 are gone in 3.13 (its _avx2 ones replace them)
    for m in ${mods//,/ }; do
      case ",$(IFS=,; echo "${keep[*]}")," in *",$m,"*) continue ;; esac  # listed twice
      if grep -qx "$m" <<<"$all"; then keep+=("$m"); else log "no module $m in Botan $v"; fi
    done
    mods=$(IFS=,; echo "${keep[*]}")
    log "Botan $v modules: $mods"
    echo "$mods" >"$top/modules"
    local bd=$top/build
    rm -rf "$bd" "$root"; mkdir -p "$bd"
    (cd "$s" && python3 ./configure.py --minimized-build --enable-modules="$mods" \
        --cc=gcc --cxxflags="-O3 -std=c++20 -fPIC" --prefix="$root" --libdir=lib \
        --with-build-dir="$bd" --disable-shared-library --without-documentation \
        --build-targets=static >"$bd/configure.log" 2>&1) || { tail -n 40 "$bd/configure.log" >&2; exit 1; }
    (cd "$s" && nice -n 10 make -f "$bd/Makefile" -j2 >"$bd/build.log" 2>&1 &&
      make -f "$bd/Makefile" install >>"$bd/build.log" 2>&1) || { tail -n 40 "$bd/build.log" >&2; exit 1; }
    echo "$v" >"$root/.done"
  fi
  grep -E '^Module|keccak|ml_dsa|sha2|avx|bmi' "$top/build/configure.log" >&2 || true
  # modsign against it: build/'s cache with BOTAN_ROOT replaced
  local opts=()
  mapfile -t opts < <(sed -n -E 's/^(OPENSSL_ROOT_DIR|MODSIGN_PKCS11_PROVIDER|CMAKE_CXX_COMPILER_LAUNCHER|CMAKE_C_COMPILER_LAUNCHER):[A-Z]+=(.+)$/-D\1=\2/p' build/CMakeCache.txt)
  [ -f "$b313/CMakeCache.txt" ] ||
    cmake -S . -B "$b313" --preset default "${opts[@]}" -DBOTAN_ROOT="$root" >&2
  CCACHE_BASEDIR=/ nice -n 10 cmake --build "$b313" -j2 --target modsign modsign_bench >&2
}

bench() {
  local m371=$PWD/build/bin bin
  for x in "$m371/modsign" "$m371/modsign_bench" "$b313/bin/modsign" "$b313/bin/modsign_bench"; do
    [ -x "$x" ] || { log "$x missing (build/ first, then $0 build)"; exit 3; }
  done
  # shellcheck disable=SC2034  # bench_tree's modsign (strip, keygen)
  modsign=$m371/modsign
  w=$(mktemp -d /tmp/modsign-botan-trial.XXXXXX); trap 'rm -rf "$w"' EXIT
  # shellcheck source=tree.sh disable=SC1091
  . bench/tree.sh
  bench_tree "$w" 0
  # the same bytes from both: ML-DSA's deterministic variant over the whole tree
  local x
  for x in 371 313; do
    fresh "$w/d$x"
    if [ $x = 371 ]; then bin=$m371/modsign; else bin=$b313/bin/modsign; fi
    "$bin" sign --key "$w/ml.pem" --cert "$w/ml.crt" --hash sha512 -q --p7s-only --deterministic -r "$w/d$x"
  done
  diff -r "$w/d371" "$w/d313" >/dev/null || { log "3.7.1 and 3.13 signed differently (--deterministic)"; exit 1; }
  log "$(find "$w/d313" -name '*.p7s' | wc -l) deterministic signatures, byte for byte the same from both builds"
  rm -rf "$w/d371" "$w/d313"
  local R=$w/results load0
  : >"$R"; load0=$(cut -d' ' -f1-3 /proc/loadavg)
  rates() {  # $1 run, $2 label, $3 bench binary
    "$3" --benchmark_min_time=0.5 --benchmark_format=json \
      --benchmark_filter='BM_Raw(Sign|Verify)/mldsa65_(openssl|botan)$|BM_Shake256/(botan|openssl)$' 2>/dev/null |
      python3 -c '
import json, sys
for b in json.load(sys.stdin)["benchmarks"]:
    if b.get("error_occurred"): continue
    s = b["cpu_time"] * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3}[b["time_unit"]]
    print(b["name"], b["bytes_per_second"] if "bytes_per_second" in b else 1 / s)' | sed "s/^/$1 $2 /" >>"$R"
  }
  tree() {  # $1 run, $2 label, $3 modsign
    local j t0 t1
    for j in 1 2; do
      fresh "$w/t"
      t0=$(date +%s.%N)
      /usr/bin/time -f '%U %S' -o "$w/cpu" \
        "$3" sign --key "$w/ml.pem" --cert "$w/ml.crt" --hash sha512 -q --p7s-only --jobs $j -r "$w/t"
      t1=$(date +%s.%N)
      echo "$1 $2 tree_j$j $(python3 -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$t0" "$t1")" >>"$R"
      echo "$1 $2 cpu_j$j $(awk '{ print $1 + $2 }' "$w/cpu")" >>"$R"
    done
  }
  local run a b
  for run in $(seq "$runs"); do
    if [ $((run % 2)) = 1 ]; then a=371; b=313; else a=313; b=371; fi
    for l in $a $b; do
      if [ "$l" = 371 ]; then rates "$run" 371 "$m371/modsign_bench"; else rates "$run" 313 "$b313/bin/modsign_bench"; fi
    done
    for l in $b $a; do
      if [ "$l" = 371 ]; then tree "$run" 371 "$m371/modsign"; else tree "$run" 313 "$b313/bin/modsign"; fi
    done
    log "repetition $run done, load $(cut -d' ' -f1-3 /proc/loadavg)"
  done
  python3 - "$R" "$runs" "$(nproc)" "$load0" "$(cut -d' ' -f1-3 /proc/loadavg)" "$(cat "$root/.done")" <<'PY'
import statistics, sys
path, runs, cpus, load0, load1, v313 = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6]
d = {}
for line in open(path):
    run, lab, name, val = line.split()
    d.setdefault(int(run), {})[(lab, name)] = float(val)
med = statistics.median
def cell(fn, fmt):
    vals = []
    for run in sorted(d):
        try: vals.append(fn(d[run]))
        except KeyError: pass
    if not vals: return "—"
    return fmt.format(med(vals)) + (f" ({', '.join(fmt.format(v) for v in vals)})" if len(vals) > 1 else "")
print(f"{cpus} CPUs, load average before {load0}, after {load1}; median of {runs} alternating repetition(s); Botan 3.13: {v313}")
print()
print("| | Botan 3.7.1 | Botan 3.13 | 3.13 / 3.7.1 | OpenSSL 3.5.7 |")
print("|---|---|---|---|---|")
rows = [("ML-DSA-65 sign/s", "BM_RawSign/mldsa65", "{:.0f}", True),
        ("ML-DSA-65 verify/s", "BM_RawVerify/mldsa65", "{:.0f}", True),
        ("SHAKE256 MiB/s", "BM_Shake256", "{:.0f}", True)]
for label, key, fmt, higher in rows:
    scale = 1 / 2**20 if "Shake" in key else 1
    b371 = lambda r, key=key, scale=scale: r[("371", key + "_botan" if "Raw" in key else key + "/botan")] * scale
    b313 = lambda r, key=key, scale=scale: r[("313", key + "_botan" if "Raw" in key else key + "/botan")] * scale
    # OpenSSL: the same library in both builds; its figure from the 3.7.1 build's binary
    oss = lambda r, key=key, scale=scale: r[("371", key + "_openssl" if "Raw" in key else key + "/openssl")] * scale
    print(f"| {label} | {cell(b371, fmt)} | {cell(b313, fmt)} | {cell(lambda r: b313(r) / b371(r), '{:.3f}')} | {cell(oss, fmt)} |")
for j in (1, 2):
    t371 = lambda r, j=j: r[("371", f"tree_j{j}")]
    t313 = lambda r, j=j: r[("313", f"tree_j{j}")]
    print(f"| modsign sign --p7s-only -j{j}, whole tree, s | {cell(t371, '{:.3f}')} | {cell(t313, '{:.3f}')} | {cell(lambda r: t313(r) / t371(r), '{:.3f}')} | |")
    c371 = lambda r, j=j: r[("371", f"cpu_j{j}")]
    c313 = lambda r, j=j: r[("313", f"cpu_j{j}")]
    print(f"| ... its CPU time user+sys, s | {cell(c371, '{:.3f}')} | {cell(c313, '{:.3f}')} | {cell(lambda r: c313(r) / c371(r), '{:.3f}')} | |")
PY
}

isa() {  # the rates alone: 3.7.1, 3.13, 3.13 without its AVX-512 code (BOTAN_CLEAR_CPUID)
  local run l
  for run in $(seq "$runs"); do
    for l in 371 313 313-noavx512; do
      case $l in
        371) x=(build/bin/modsign_bench) ;;
        313) x=("$b313/bin/modsign_bench") ;;
        *) x=(env BOTAN_CLEAR_CPUID=avx512 "$b313/bin/modsign_bench") ;;
      esac
      "${x[@]}" --benchmark_min_time=0.5 --benchmark_format=json \
        --benchmark_filter='BM_Raw(Sign|Verify)/mldsa65_botan$|BM_Shake256/botan$' 2>/dev/null |
        python3 -c '
import json, sys
for b in json.load(sys.stdin)["benchmarks"]:
    s = b["cpu_time"] * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3}[b["time_unit"]]
    v = b["bytes_per_second"] / 2**20 if "bytes_per_second" in b else 1 / s
    print(sys.argv[1], sys.argv[2], b["name"], v)' "$run" "$l"
    done
  done | python3 -c '
import statistics, sys
d = {}
for line in sys.stdin:
    run, l, name, v = line.split()
    d.setdefault((l, name), []).append(float(v))
print("| Botan, per second (CPU time) | " + " | ".join(l for l in ("371", "313", "313-noavx512")) + " |")
print("|---|---|---|---|")
for name in ("BM_RawSign/mldsa65_botan", "BM_RawVerify/mldsa65_botan", "BM_Shake256/botan"):
    print(f"| {name} | " + " | ".join(f"{statistics.median(d[(l, name)]):.0f}" for l in ("371", "313", "313-noavx512")) + " |")'
  echo "load average $(cut -d' ' -f1-3 /proc/loadavg), $runs repetitions"
}

case $what in
  build) build ;;
  bench) bench ;;
  isa) isa ;;
  all) build; bench ;;
  *) echo "usage: $0 [build|bench|isa|all] [--runs R]" >&2; exit 2 ;;
esac
