#!/usr/bin/env bash
# bench/compare-openssl.sh [N]: whole-process comparison, in one run, of modsign against the
# baseline a distribution uses today: one `openssl cms` process per module (what
# scripts/sign-file costs per module, without its own start-up).  N real modules from the
# Debian cloud kernel (tools/fetch-debian-kernel; default 200).  Prints ratios baseline/modsign.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-200}
modsign=$PWD/build/bin/modsign
openssl=$(sed -n 's/^MODSIGN_OPENSSL_BIN:FILEPATH=//p' build/CMakeCache.txt)
[ -x "$modsign" ] && [ -x "$openssl" ] || { echo "run tools/check first" >&2; exit 3; }
eval "$(tools/fetch-debian-kernel 2>/dev/null)"
w=$(mktemp -d /tmp/modsign-bench.XXXXXX); trap 'rm -rf "$w"' EXIT
mapfile -t src < <(find "$MODULES" -name '*.ko' -type f | sort | head -n "$n")
mkdir -p "$w/a" "$w/b"
for m in "${src[@]}"; do
  b=$(basename "$m")
  # unsigned content: strip the Debian signature (sig_len from the trailer)
  len=$(stat -c %s "$m"); siglen=$(tail -c 32 "$m" | head -c 4 | od -An -tu1 | awk '{print $1*16777216+$2*65536+$3*256+$4}')
  head -c $((len - 40 - siglen)) "$m" > "$w/a/$b"; cp "$w/a/$b" "$w/b/$b"
done
mapfile -t A < <(find "$w/a" -name '*.ko' | sort)
mapfile -t B < <(find "$w/b" -name '*.ko' | sort)
"$modsign" keygen --algo rsa-4096 --out "$w/rsa.pem" --cert-out "$w/rsa.crt" >/dev/null
"$modsign" keygen --algo ml-dsa-65 --out "$w/ml.pem" --cert-out "$w/ml.crt" >/dev/null
now() { date +%s.%N; }
ratio() { python3 -c "import sys; b,m=float(sys.argv[1]),float(sys.argv[2]); print(f'{b:8.2f} s {m:8.2f} s   x{b/m:6.1f}')" "$1" "$2"; }

printf '%-44s %10s %10s %8s\n' "job ($n modules, $(nproc) CPUs)" "openssl" "modsign" "ratio"
for spec in "RSA-4096 sha256 no signedAttrs|rsa|-noattr -md sha256|--hash sha256" \
            "ML-DSA-65 sha512 signedAttrs|ml|-nosmimecap -no_signing_time -md sha512|--signed-attrs"; do
  IFS='|' read -r label k oflags mflags <<<"$spec"
  t0=$(now)
  for m in "${A[@]}"; do
    "$openssl" cms -sign -binary -nocerts $oflags -in "$m" -signer "$w/$k.crt" -inkey "$w/$k.pem" -outform DER -out "$m.p7s"
  done
  t1=$(now)
  "$modsign" sign --key "$w/$k.pem" --cert "$w/$k.crt" $mflags --p7s-only "${B[@]}" >/dev/null
  t2=$(now)
  printf '%-44s %s\n' "sign: $label" "$(ratio "$(python3 -c "print($t1-$t0)")" "$(python3 -c "print($t2-$t1)")")"
  if [ "$k" = ml ]; then
    "$modsign" sign --key "$w/$k.pem" --cert "$w/$k.crt" $mflags "${B[@]}" >/dev/null
    t0=$(now)
    for m in "${A[@]}"; do
      "$openssl" cms -verify -binary -inform DER -in "$m.p7s" -content "$m" -certfile "$w/$k.crt" -nointern -noverify -out /dev/null 2>/dev/null
    done
    t1=$(now)
    "$modsign" verify --cert "$w/$k.crt" "${B[@]}" >/dev/null
    t2=$(now)
    printf '%-44s %s\n' "verify: $label" "$(ratio "$(python3 -c "print($t1-$t0)")" "$(python3 -c "print($t2-$t1)")")"
  fi
done
