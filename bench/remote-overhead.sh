#!/usr/bin/env bash
# bench/remote-overhead.sh [--modules N] [--size BYTES] [--runs R] [--algo ml-dsa-65|rsa-4096|ecdsa-p256]
# What signing in two phases costs modsign, per module, against one-step signing, in one run:
#   one-step  modsign sign --jobs 1 --sync none --deterministic over N fresh modules
#   prepare   modsign sign --prepare (--jobs 1) over the same N modules
#   attach    modsign sign --attach --jobs 1 --sync none with the N signatures ready in a
#             directory (made beforehand by openssl pkeyutl, outside the timing: that is the
#             remote signer's time, which one-step signing spends inside modsign)
# Prints the wall-clock seconds of each, per module in ms, and (prepare+attach)/one-step.
# The median of R runs.  Uses build/bin/modsign and the OpenSSL of tests (OPENSSL, default
# the bootstrapped 3.5 one, else `openssl`).
set -euo pipefail
cd "$(dirname "$0")/.."
n=200; size=200000; runs=3; algo=ml-dsa-65
while [ $# -gt 0 ]; do
  case $1 in
    --modules) n=$2; shift ;;
    --size) size=$2; shift ;;
    --runs) runs=$2; shift ;;
    --algo) algo=$2; shift ;;
    *) echo "usage: $0 [--modules N] [--size BYTES] [--runs R] [--algo ml-dsa-65|rsa-4096|ecdsa-p256]" >&2; exit 2 ;;
  esac
  shift
done
M=${MODSIGN:-build/bin/modsign}
O=${OPENSSL:-$(ls -d "${MODSIGN_CACHE:-$HOME/.cache/modsign}"/deps/openssl-*/bin/openssl 2>/dev/null | head -1)}
O=${O:-openssl}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$M" keygen --algo "$algo" -o "$tmp/k.pem" --cert-out "$tmp/c.pem" >/dev/null
case $algo in
  ml-dsa-*) signopt="-pkeyopt mu:1 -pkeyopt deterministic:1" ;;
  rsa-*) signopt="-pkeyopt digest:sha512" ;;
  *) signopt="-pkeyopt digest:sha512 -pkeyopt nonce-type:1" ;;
esac
now() { date +%s.%N; }
fresh() {
  rm -rf "$tmp/$1"; mkdir -p "$tmp/$1"
  for i in $(seq "$n"); do cp "$tmp/base.bin" "$tmp/$1/m$i.ko"; printf '%08d' "$i" >> "$tmp/$1/m$i.ko"; done
}
results=()
for r in $(seq "$runs"); do
  head -c "$size" /dev/urandom > "$tmp/base.bin"
  fresh one
  t0=$(now); "$M" sign -q -j1 --sync none --deterministic --key "$tmp/k.pem" --cert "$tmp/c.pem" -r "$tmp/one"; t1=$(now)
  fresh two
  t2=$(now); "$M" sign -q -j1 --prepare "$tmp/m.jsonl" --cert "$tmp/c.pem" -r "$tmp/two"; t3=$(now)
  rm -rf "$tmp/sigs"; mkdir "$tmp/sigs"
  while read -r line; do
    idx=$(printf '%s' "$line" | sed 's/^{"index":\([0-9]*\),.*/\1/')
    printf '%s' "$line" | sed 's/.*"to_sign":"\([0-9a-f]*\)".*/\1/' | xxd -r -p > "$tmp/tbs.bin"
    # shellcheck disable=SC2086
    "$O" pkeyutl -sign -inkey "$tmp/k.pem" -in "$tmp/tbs.bin" $signopt -out "$tmp/sigs/$idx.sig"
  done < "$tmp/m.jsonl"
  t4=$(now); "$M" sign -q -j1 --sync none --attach "$tmp/m.jsonl" --signatures "$tmp/sigs"; t5=$(now)
  for i in $(seq "$n"); do cmp -s "$tmp/one/m$i.ko" "$tmp/two/m$i.ko" || { echo "m$i.ko differs" >&2; exit 1; }; done
  results+=("$(echo "$t0 $t1 $t2 $t3 $t4 $t5" | awk '{printf "%.3f %.3f %.3f", $2-$1, $4-$3, $6-$5}')")
done
printf '%s\n' "${results[@]}" | sort -n -k1 | awk -v n="$n" -v size="$size" -v algo="$algo" -v runs="$runs" '
  { one[NR] = $1; prep[NR] = $2; att[NR] = $3 }
  END {
    m = int((NR + 1) / 2)
    printf "%s, %d modules of %d bytes, median of %d run(s), --jobs 1, outputs byte-identical\n", algo, n, size, runs
    printf "one-step sign      %7.3f s  %6.2f ms/module\n", one[m], 1000 * one[m] / n
    printf "prepare            %7.3f s  %6.2f ms/module\n", prep[m], 1000 * prep[m] / n
    printf "attach             %7.3f s  %6.2f ms/module\n", att[m], 1000 * att[m] / n
    printf "(prepare+attach)/one-step = %.2f\n", (prep[m] + att[m]) / one[m]
  }'
