#!/usr/bin/env bash
# bench/memory-bounds.sh: peak RSS (GNU time's %M) of the commands whose memory issue 29
# bounded, on hostile inputs of two sizes each, so that a bound shows as a figure that does
# not grow with the input:
#   - `verify -r` on 3,000 and 9,000 nested empty directories (the old walk: 4.2 GB at 9,000);
#   - `ima replay` (text and --json) on ima-ng lists of about 64 and 256 MiB (the old
#     reader: 10-13x the list);
#   - `dbx list` and `dbx list --json` on EFI_SIGNATURE_LISTs of 4 and 15 MiB (16 MiB is the
#     most it reads; the old JSON tree took 1.07 GB for 16 MiB).
# Memory, not time: it may run beside other work.  Usage: bench/memory-bounds.sh [MODSIGN]
# (default build/bin/modsign).  Prints one line per run: command, input size, peak RSS.
set -euo pipefail
cd "$(dirname "$0")/.."
modsign=$(realpath "${1:-build/bin/modsign}")
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
rss() {  # rss LABEL SIZE CMD...: peak RSS of CMD (its output discarded; time's line is last)
  local label=$1 size=$2; shift 2
  /usr/bin/time -f '%M' "$@" >/dev/null 2>"$w/err" || true
  printf '%-34s %12s  %8.1f MiB\n' "$label" "$size" "$(tail -n 1 "$w/err" | awk '{print $1 / 1024}')"
}
deep() {  # deep DIR N: N nested directories under DIR (by descriptor: any depth)
  python3 - "$1" "$2" <<'EOF'
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
for _ in range(int(sys.argv[2])):
    os.mkdir("d", dir_fd=fd)
    nfd = os.open("d", os.O_RDONLY, dir_fd=fd)
    os.close(fd)
    fd = nfd
EOF
}
list() {  # list FILE MIB: ima-ng records (sha1 bank, sha256 file digests) up to MIB MiB
  python3 - "$1" "$2" <<'EOF'
import hashlib, struct, sys
out, limit = open(sys.argv[1], "wb"), int(sys.argv[2]) << 20
n = 0
while out.tell() < limit:
    name = b"/usr/lib/file-%08d\0" % n
    dng = b"sha256:\0" + hashlib.sha256(name).digest()
    data = struct.pack("<I", len(dng)) + dng + struct.pack("<I", len(name)) + name
    out.write(struct.pack("<I", 10) + hashlib.sha1(data).digest() + struct.pack("<I", 6) + b"ima-ng" +
              struct.pack("<I", len(data)) + data)
    n += 1
EOF
}
esl() {  # esl FILE MIB: one EFI_CERT_SHA256 list of 48-byte entries, about MIB MiB
  python3 - "$1" "$2" <<'EOF'
import os, struct, sys, uuid
n = (int(sys.argv[2]) << 20) // 48
sha256 = uuid.UUID("c1c41626-504c-4092-aca9-41f936934328").bytes_le
owner = uuid.UUID("77fa9abd-0359-4d32-bd60-28f4e78f784b").bytes_le
with open(sys.argv[1], "wb") as f:
    f.write(sha256 + struct.pack("<III", 28 + 48 * n, 0, 48))
    for i in range(n):
        f.write(owner + i.to_bytes(32, "big"))
EOF
}
"$modsign" keygen -o "$w/k.pem" --cert-out "$w/k.x509" >/dev/null
echo "# $(date -u +%F), $(git rev-parse --short HEAD), $(nproc) CPUs; peak RSS (GNU time %M)"
rss "true (the floor of a process)" - true
rss "modsign --version" - "$modsign" --version
for n in 3000 9000; do
  mkdir "$w/deep$n"; deep "$w/deep$n" $n
  rss "verify -r (nested, no module)" "$n levels" "$modsign" verify --cert "$w/k.x509" -r "$w/deep$n"
  rm -rf "$w/deep$n"
done
for m in 64 256; do
  list "$w/list" $m
  rss "ima replay" "$m MiB" "$modsign" ima replay "$w/list"
  rss "ima replay --json" "$m MiB" "$modsign" ima replay --json "$w/list"
done
rm -f "$w/list"
for m in 4 15; do
  esl "$w/esl" $m
  rss "dbx list" "$m MiB" "$modsign" dbx list --form esl "$w/esl"
  rss "dbx list --json" "$m MiB" "$modsign" dbx list --json --form esl "$w/esl"
done
