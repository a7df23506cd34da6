# bench/tree.sh: sourced by bench/batch-compare.sh and bench/sign-floor.sh (not run).
# bench_tree W N: the unsigned module tree in W/src (the first N modules of the Debian
# cloud kernel's, sorted by path; N = 0: all of them; tools/fetch-debian-kernel, cached,
# signatures stripped) and the keys W/ml.pem + W/ml.crt (ML-DSA-65) and W/rsa.pem + W/rsa.crt
# (RSA-4096).  Sets n (modules) and bytes (their total size).  Needs $modsign.
bench_tree() {
  local w=$1 limit=$2 src
  eval "$(tools/fetch-debian-kernel 2>/dev/null)"
  mapfile -t src < <(cd "$MODULES" && find . -name '*.ko' -type f | sort)
  [ "$limit" -gt 0 ] && src=("${src[@]:0:$limit}")
  n=${#src[@]}
  mkdir -p "$w/src"
  (cd "$MODULES" && printf '%s\0' "${src[@]}" | xargs -0 cp --parents -t "$w/src")
  "$modsign" strip -r "$w/src" >/dev/null
  bytes=$(find "$w/src" -name '*.ko' -printf '%s\n' | awk '{s += $1} END {print s}')
  "$modsign" keygen --algo ml-dsa-65 --out "$w/ml.pem" --cert-out "$w/ml.crt" >/dev/null
  "$modsign" keygen --algo rsa-4096 --out "$w/rsa.pem" --cert-out "$w/rsa.crt" >/dev/null
}
# fresh DIR: a copy of W/src (W = $w) at DIR, its page cache warm, everything synced.
fresh() {
  rm -rf "$1"; cp -a "$w/src" "$1"; cat $(find "$1" -name '*.ko') >/dev/null; sync
}
