# bench/usr-sample.sh: sourced by bench/ima-speed.sh and bench/ima-floor.sh.
# usr_sample_args ARGS...: --files N (default 5000) and --runs R (default 3) into nfiles and
# runs; anything else is a usage error (exit 2).
usr_sample_args() {
  runs=3; nfiles=5000
  while [ $# -gt 0 ]; do
    case $1 in
      --files) nfiles=$2; shift ;;
      --runs) runs=$2; shift ;;
      *) echo "usage: $0 [--files N] [--runs R]" >&2; exit 2 ;;
    esac
    shift
  done
}
# usr_sample DEST N: N regular files drawn at random (fixed seed) from this machine's /usr,
# so the sample keeps /usr's size distribution; copied once and cached under
# ${MODSIGN_CACHE:-~/.cache/modsign}/bench/ima-usr-N (outside the checkout), then copied to
# DEST.  Sets F (DEST's files, absolute paths, sorted), n, bytes and sizes (a summary line).
usr_sample() {
  local dest=$1 nfiles=$2
  local cache=${MODSIGN_CACHE:-$HOME/.cache/modsign}/bench/ima-usr-$nfiles
  if [ ! -f "$cache/.complete" ]; then
    rm -rf "$cache.tmp"; mkdir -p "$cache.tmp"
    find /usr -xdev -type f -readable -print0 2>/dev/null | sort -z |
      shuf -z -n "$nfiles" --random-source=<(yes modsign-ima-bench) |
      xargs -0 cp --parents -t "$cache.tmp"
    rm -rf "$cache"; mv "$cache.tmp" "$cache"; touch "$cache/.complete"
  fi
  cp -a "$cache/usr" "$dest"
  mapfile -t F < <(find "$dest" -type f | sort)
  n=${#F[@]}
  bytes=$(find "$dest" -type f -printf '%s\n' | awk '{s += $1} END {print s}')
  sizes=$(find "$dest" -type f -printf '%s\n' | sort -n |
    awk '{a[NR] = $1} END {printf "median %d B, p90 %d B, max %d B", a[int(NR/2)+1], a[int(NR*0.9)], a[NR]}')
}
