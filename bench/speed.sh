#!/usr/bin/env bash
# bench/speed.sh [--quick]: the per-operation building blocks, modsign (Google Benchmark,
# build/bin/modsign_bench) side by side with `openssl speed` for the same algorithms, in
# one run.  Prints a Markdown table (times per operation; hashes in MB/s).
#   - ML-DSA-44/65/87 sign and verify over a 64-byte message, OpenSSL and Botan backends
#     (Botan reusing its per-thread signer/verifier as a batch does), RSA-4096;
#   - SHA-256, SHA-512, SHAKE256 per MiB, OpenSSL and Botan; the one-pass SHA-256+SHA-512
#     digest per MiB;
#   - DER parse of a signed module's CMS, SignedData build, module_sig_check per module.
# --quick: shorter measuring times (noisier).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=2; min_time=0.5
[ "${1:-}" = --quick ] && { secs=1; min_time=0.05; }
openssl=$(sed -n 's/^MODSIGN_OPENSSL_BIN:FILEPATH=//p' build/CMakeCache.txt)
[ -x build/bin/modsign_bench ] && [ -x "$openssl" ] || { echo "run tools/check first" >&2; exit 3; }
w=$(mktemp -d /tmp/modsign-speed.XXXXXX); trap 'rm -rf "$w"' EXIT

build/bin/modsign_bench --benchmark_min_time="$min_time" --benchmark_format=json \
  --benchmark_filter='BM_Raw|BM_Digest|BM_Shake|OnePassPerMiB|ParseCms|BM_Sign|BM_Verify|ModuleSigCheck' \
  >"$w/gb.json" 2>/dev/null
for a in ML-DSA-44 ML-DSA-65 ML-DSA-87 rsa4096; do
  "$openssl" speed -seconds "$secs" "$a" 2>/dev/null >"$w/speed-$a.txt" || true
done
for h in sha256 sha512 shake256; do
  "$openssl" speed -seconds "$secs" -bytes 1048576 -evp "$h" 2>/dev/null >"$w/speed-$h.txt" || true
done

python3 - "$w" <<'PY'
import json, os, re, sys
w = sys.argv[1]
gb = {b["name"]: b for b in json.load(open(f"{w}/gb.json"))["benchmarks"]}
def us(name):  # CPU time per iteration in µs (CPU time: robust against other load)
    b = gb.get(name)
    if not b or b.get("error_occurred"): return None
    scale = {"ns": 1e-3, "us": 1, "ms": 1e3}[b["time_unit"]]
    return b["cpu_time"] * scale
def mbs(name):
    b = gb.get(name)
    return b["bytes_per_second"] / 1e6 if b and "bytes_per_second" in b else None
def ossl_sig(alg):  # (sign µs, verify µs) from the "keygen signs verify" table
    lines = open(f"{w}/speed-{alg}.txt").read().splitlines()
    for i, l in enumerate(lines):
        if re.search(r"\bsigns\s+verify\b", l):
            for m in lines[i + 1:]:
                f = m.split()
                if f and f[0].lower() == alg.lower():
                    return float(f[2].rstrip("s")) * 1e6, float(f[3].rstrip("s")) * 1e6
    return None, None
def ossl_hash(h):
    for l in open(f"{w}/speed-{h}.txt"):
        f = l.split()
        if f and f[0].lower() == h:
            return float(f[1].rstrip("k")) * 1000 / 1e6
    return None
fmt = lambda v, u="µs": "—" if v is None else (f"{v:.1f} {u}" if v < 100 else f"{v:.0f} {u}")
print("| operation | modsign, OpenSSL backend | modsign, Botan backend | openssl speed |")
print("|---|---|---|---|")
for lvl, alg in (("44", "ML-DSA-44"), ("65", "ML-DSA-65"), ("87", "ML-DSA-87")):
    s, v = ossl_sig(alg)
    print(f"| {alg} sign | {fmt(us(f'BM_RawSign/mldsa{lvl}_openssl'))} | {fmt(us(f'BM_RawSign/mldsa{lvl}_botan'))} | {fmt(s)} |")
    print(f"| {alg} verify | {fmt(us(f'BM_RawVerify/mldsa{lvl}_openssl'))} | {fmt(us(f'BM_RawVerify/mldsa{lvl}_botan'))} | {fmt(v)} |")
s, v = ossl_sig("rsa4096")
print(f"| RSA-4096 sign | {fmt(us('BM_RawSign/rsa4096'))} | — | {fmt(s)} |")
print(f"| RSA-4096 verify | {fmt(us('BM_RawVerify/rsa4096'))} | — | {fmt(v)} |")
for h, name in (("sha256", "SHA-256"), ("sha512", "SHA-512")):
    print(f"| {name}, 1 MiB | {fmt(mbs(f'BM_Digest/{h}'), 'MB/s')} | {fmt(mbs(f'BM_DigestBotan/{h}'), 'MB/s')} | {fmt(ossl_hash(h), 'MB/s')} |")
print(f"| SHAKE256 (ML-DSA μ), 1 MiB | {fmt(mbs('BM_Shake256/openssl'), 'MB/s')} | {fmt(mbs('BM_Shake256/botan'), 'MB/s')} | {fmt(ossl_hash('shake256'), 'MB/s')} |")
print(f"| one pass SHA-256 + SHA-512, 1 MiB | {fmt(mbs('BM_OnePassPerMiB'), 'MB/s')} | — | — |")
print(f"| DER parse of a 3.4 KiB ML-DSA-65 SignedData | {fmt(us('BM_ParseCms'))} | | |")
for n, label in (("rsa4096_noattrs", "RSA-4096, no signedAttrs"), ("rsa4096_attrs", "RSA-4096, signedAttrs"),
                 ("mldsa65_noattrs", "ML-DSA-65, no signedAttrs"), ("mldsa65_attrs", "ML-DSA-65, signedAttrs")):
    o = us(f"BM_Sign/{n}") if n.startswith("rsa") else us(f"BM_Sign/{n}_openssl")
    b = None if n.startswith("rsa") else us(f"BM_Sign/{n}_botan")
    print(f"| SignedData build, 40 KiB module, {label} | {fmt(o)} | {fmt(b)} | |")
for n, label in (("rsa4096", "RSA-4096"), ("mldsa65_noattrs", "ML-DSA-65, no signedAttrs"), ("mldsa65_attrs", "ML-DSA-65, signedAttrs")):
    o = us(f"BM_ModuleSigCheck/{n}") if n.startswith("rsa") else us(f"BM_ModuleSigCheck/{n}_openssl")
    b = None if n.startswith("rsa") else us(f"BM_ModuleSigCheck/{n}_botan")
    print(f"| module_sig_check (verify), 40 KiB module, {label} | {fmt(o)} | {fmt(b)} | |")
print()
print("modsign columns: CPU time per operation (Google Benchmark); openssl speed: its own per-operation time.")
PY
