#!/usr/bin/env bash
# bench/token-rate.sh [--modules N] [--size BYTES] [--runs R]
# The signing rate with a key on a PKCS#11 token (SoftHSM2, through pkcs11-provider) against
# the same kind of key in a PEM file, in one run: `modsign sign --replace -q --sync none`
# over a tree of N modules, -j1 and -j2, token and PEM runs alternating, median of R runs.
# Keys: RSA-2048 and ECDSA P-256, generated on a token this script initialises in a
# temporary directory (SOFTHSM2_CONF), certificates made by `openssl req` through the
# provider; the PEM keys come from `modsign keygen`.  Prints modules/s and token/PEM.
# Needs softhsm2, opensc (pkcs11-tool) and pkcs11-provider (tools/bootstrap-deps prints its
# path as PKCS11_PROVIDER=); uses build/bin/modsign.
set -euo pipefail
cd "$(dirname "$0")/.."
n=300; size=65536; runs=3
while [ $# -gt 0 ]; do
  case $1 in
    --modules) n=$2; shift ;;
    --size) size=$2; shift ;;
    --runs) runs=$2; shift ;;
    *) echo "usage: $0 [--modules N] [--size BYTES] [--runs R]" >&2; exit 2 ;;
  esac
  shift
done
M=${MODSIGN:-build/bin/modsign}
deps=$(tools/bootstrap-deps 2>/dev/null)
O=$(sed -n 's/^OPENSSL_ROOT=//p' <<<"$deps"); O=${O:+$O/bin/}openssl
provider=${MODSIGN_PKCS11_PROVIDER:-$(sed -n 's/^PKCS11_PROVIDER=//p' <<<"$deps")}
softhsm=/usr/lib/softhsm/libsofthsm2.so
for f in "$provider" "$softhsm"; do
  [ -f "$f" ] || { echo "token-rate: $f not found (tools/check installs softhsm2 and pkcs11-provider)" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/tokens"
printf 'directories.tokendir = %s\nobjectstore.backend = file\nlog.level = ERROR\n' "$tmp/tokens" >"$tmp/softhsm2.conf"
export SOFTHSM2_CONF=$tmp/softhsm2.conf PKCS11_PROVIDER_MODULE=$softhsm MODSIGN_PKCS11_PROVIDER=$provider
unset KBUILD_SIGN_PIN
softhsm2-util --init-token --free --label bench --pin 1234 --so-pin 5678 >/dev/null
printf 'openssl_conf = init\n[init]\nproviders = prov\n[prov]\ndefault = dflt\npkcs11 = p11\n[dflt]\nactivate = 1\n[p11]\nmodule = %s\npkcs11-module-block-operations = digest\npkcs11-module-quirks = no-deinit\nactivate = 1\n' \
  "$provider" >"$tmp/openssl.cnf"
echo 1234 >"$tmp/pin"
id=1
for k in rsa2048:rsa:2048:rsa-2048 p256:EC:prime256v1:ecdsa-p256; do
  IFS=: read -r label t1 t2 algo <<<"$k"
  pkcs11-tool --module "$softhsm" --token-label bench --login --pin 1234 --keypairgen --key-type "$t1:$t2" \
    --label "$label" --id "0$id" >/dev/null 2>&1
  id=$((id + 1))
  OPENSSL_CONF=$tmp/openssl.cnf "$O" req -new -x509 -key "pkcs11:token=bench;object=$label" -passin pass:1234 \
    -subj "/CN=bench $label" -days 30 -sha256 -addext subjectKeyIdentifier=hash -out "$tmp/$label.crt" </dev/null
  "$M" keygen --algo "$algo" -o "$tmp/$label.pem" --cert-out "$tmp/$label.pem.crt" >/dev/null
done
head -c "$size" /dev/urandom >"$tmp/base.bin"
fresh() {
  rm -rf "$tmp/tree"; mkdir "$tmp/tree"
  for i in $(seq "$n"); do cp "$tmp/base.bin" "$tmp/tree/m$i.ko"; printf '%08d' "$i" >>"$tmp/tree/m$i.ko"; done
}
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
rate() {  # rate JOBS KEY CERT -> modules/s of one run
  fresh
  local t0 t1
  t0=$(date +%s.%N)
  "$M" sign --key "$2" --cert "$3" --pin-file "$tmp/pin" --replace -q --sync none -j "$1" -r "$tmp/tree"
  t1=$(date +%s.%N)
  awk -v n="$n" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f\n", n / (b - a) }'
}
echo "token-rate: $n modules of $size bytes, median of $runs alternating runs, $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg)"
printf '%-9s %4s %10s %10s %11s\n' key jobs token/s PEM/s token/PEM
for label in rsa2048 p256; do
  for j in 1 2; do
    tk=(); pm=()
    for _ in $(seq "$runs"); do
      tk+=("$(rate "$j" "pkcs11:token=bench;object=$label" "$tmp/$label.crt")")
      pm+=("$(rate "$j" "$tmp/$label.pem" "$tmp/$label.pem.crt")")
    done
    a=$(printf '%s\n' "${tk[@]}" | median); b=$(printf '%s\n' "${pm[@]}" | median)
    printf '%-9s %4s %10s %10s %11s\n' "$label" "$j" "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }')"
  done
done
