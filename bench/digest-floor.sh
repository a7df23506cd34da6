#!/usr/bin/env bash
# bench/digest-floor.sh: one-pass digest of 256 MiB (SHA-256 + SHA-512 + SHAKE256 μ)
# against the floor = the three hashes one after another at the rates `openssl speed`
# reports on this machine in the same run; and peak RSS of `modsign digest` on a 1 GiB
# module.  Prints floor/measured (>= 0.9 wanted) and the RSS in MiB.
set -euo pipefail
cd "$(dirname "$0")/.."
openssl=$(sed -n 's/^MODSIGN_OPENSSL_BIN:FILEPATH=//p' build/CMakeCache.txt)
rate() {  # bytes per second for 1 MiB blocks
  "$openssl" speed -seconds 2 -bytes 1048576 -evp "$1" 2>/dev/null | awk -v a="$1" 'tolower($1)==tolower(a) { v=$2; sub("k","",v); print v*1000 }'
}
r256=$(rate sha256); r512=$(rate sha512); rshake=$(rate shake256)
measured=$(build/bin/modsign_bench --benchmark_filter='OnePass' --benchmark_format=json 2>/dev/null |
  python3 -c 'import json,sys; b=json.load(sys.stdin)["benchmarks"][0]; print(b["real_time"]/1000)')
threaded=$(build/bin/modsign_bench --benchmark_filter='TwoThreads' --benchmark_format=json 2>/dev/null |
  python3 -c 'import json,sys; b=json.load(sys.stdin)["benchmarks"][0]; print(b["real_time"]/1000)')
python3 - "$r256" "$r512" "$rshake" "$measured" "$threaded" <<'PY'
import sys
r256, r512, rshake, measured, threaded = map(float, sys.argv[1:])
n = 256 * 2**20
floor = n / r256 + n / r512 + n / rshake
print(f"openssl speed (1 MiB blocks): sha256 {r256/1e6:.0f} MB/s, sha512 {r512/1e6:.0f} MB/s, shake256 {rshake/1e6:.0f} MB/s")
print(f"floor {floor:.3f} s, one pass measured {measured:.3f} s, floor/measured = {floor/measured:.2f}")
print(f"two threads {threaded:.3f} s, floor/measured = {floor/threaded:.2f}")
PY
w=$(mktemp -d /tmp/modsign-digest.XXXXXX); trap 'rm -rf "$w"' EXIT
head -c $((1024*1024*1024 - 4096)) /dev/zero > "$w/big.ko"
build/bin/modsign keygen --out "$w/k.pem" >/dev/null
/usr/bin/time -f '%M %e' -o "$w/rss" build/bin/modsign sign --key "$w/k.pem" "$w/big.ko" >/dev/null
echo "ML-DSA-65 signing of a 1 GiB module (streamed, external mu): peak RSS $(( $(cut -d' ' -f1 "$w/rss") / 1024 )) MiB, $(cut -d' ' -f2 "$w/rss") s"
/usr/bin/time -f '%M' -o "$w/rss" build/bin/modsign digest "$w/big.ko" >/dev/null
echo "peak RSS of modsign digest on the signed 1 GiB module: $(( $(cat "$w/rss") / 1024 )) MiB"
/usr/bin/time -f '%M %e' -o "$w/rss" build/bin/modsign verify --cert "$w/k.pem" "$w/big.ko" >/dev/null
echo "verify of it (streamed): peak RSS $(( $(cut -d' ' -f1 "$w/rss") / 1024 )) MiB, $(cut -d' ' -f2 "$w/rss") s"
