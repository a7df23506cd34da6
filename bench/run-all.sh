#!/usr/bin/env bash
# bench/run-all.sh [--quick]: every measurement of issue 5 in one go, on a quiet machine,
# printed as one Markdown block for bench/RESULTS.md (also saved as build/bench-results.md):
#   machine and date, bench/speed.sh (per operation, modsign next to openssl speed) and
#   bench/batch-compare.sh (whole tree against one openssl process per module, efficiency
#   against the floor, peak RSS).  Full mode takes about 10 minutes on 2 CPUs.
# --quick: short measuring times, 100 modules, one repetition (for checking the scripts).
set -euo pipefail
cd "$(dirname "$0")/.."
quick=()
[ "${1:-}" = --quick ] && quick=(--quick)
[ -x build/bin/modsign ] && [ -x build/bin/modsign_bench ] || { echo "run tools/check first" >&2; exit 3; }
openssl=$(sed -n 's/^MODSIGN_OPENSSL_BIN:FILEPATH=//p' build/CMakeCache.txt)
botan=$(sed -n 's/^BOTAN_ROOT:PATH=//p' build/CMakeCache.txt)
out=build/bench-results.md
{
  echo "## $(date -u +%F), batch signing and verification (issue 5)${quick:+ — QUICK RUN}"
  echo
  echo "Machine: $(nproc) x \"$(lscpu | sed -n 's/^Model name: *//p')\", $(free -g | awk '/^Mem:/ {print $2}') GiB," \
       "Linux $(uname -r); CPU flags: $(grep -o -w 'sha_ni\|avx2\|avx512f\|bmi2' /proc/cpuinfo | sort -u | tr '\n' ' ')."
  echo "Load average before the run: $(cut -d' ' -f1-3 /proc/loadavg)."
  echo "$("$openssl" version | cut -d' ' -f1-2); Botan ${botan##*/botan-}; build type" \
       "$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' build/CMakeCache.txt)."
  echo
  echo "### Per operation (\`bench/speed.sh${quick:+ --quick}\`)"
  echo
  bench/speed.sh "${quick[@]}"
  echo
  echo "### Whole module tree (\`bench/batch-compare.sh${quick:+ --quick}\`)"
  echo
  bench/batch-compare.sh "${quick[@]}"
} | tee "$out"
echo >&2
echo "saved to $out" >&2
