#!/bin/sh
# A program built against an installed modsign, two ways: find_package(modsign 0.2 CONFIG)
# (examples/CMakeLists.txt) and pkg-config with plain g++ (examples/Makefile).  Both run on
# a fresh module with an ML-DSA-65 key made here by openssl; the output lines are exact.
#   consumer.sh BUILD_DIR SOURCE_DIR CMAKE OPENSSL_BIN [PKG_CONFIG_DIR...]
# The PKG_CONFIG_DIRs are those of a private OpenSSL/Botan (tools/bootstrap-deps), which
# modsign.pc's Requires.private names.  The programs run with LD_LIBRARY_PATH naming the
# prefix alone (no run path is built into them); libmodsign.so.0 finds a private OpenSSL
# through its own run path.
set -eu
build=$1 src=$2 cmake=$3 openssl=$4
shift 4
fail() { echo "consumer.sh: $*" >&2; exit 1; }
tmp=$(mktemp -d /tmp/modsign-consumer.XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM
prefix=$tmp/prefix

"$cmake" --install "$build" --prefix "$prefix" >"$tmp/install.log" || { cat "$tmp/install.log" >&2; fail "install failed"; }
libdir=$(dirname "$(find "$prefix" -name libmodsign.so.0 | head -n 1)")
[ -e "$libdir/libmodsign.so.0" ] || fail "no libmodsign.so.0 under $prefix"
for f in include/modsign/modsign.hpp include/modsign/version.hpp; do
  [ -f "$prefix/$f" ] || fail "$f not installed"
done
! find "$prefix/include" -name '*.hpp' | xargs grep -l '#include "\(common\|crypto\|cms\|module\|asn1\|digest\|blacklist\)/' >/dev/null ||
  fail "an installed header includes an internal one"

# 1. CMake package.
env -u CMAKE_CXX_COMPILER_LAUNCHER "$cmake" -S "$src/examples" -B "$tmp/cmake" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_SKIP_RPATH=ON -DCMAKE_BUILD_TYPE=Release >"$tmp/cmake.log" 2>&1 || { cat "$tmp/cmake.log" >&2; fail "cmake configure failed"; }
"$cmake" --build "$tmp/cmake" >>"$tmp/cmake.log" 2>&1 || { cat "$tmp/cmake.log" >&2; fail "cmake build failed"; }

# 2. pkg-config and the Makefile.
pcpath=$libdir/pkgconfig
for d in "$@"; do pcpath=$pcpath:$d; done
mkdir "$tmp/make"
cp "$src/examples/Makefile" "$src/examples/sign_and_predict.cpp" "$tmp/make/"
PKG_CONFIG_PATH=$pcpath make -C "$tmp/make" CXX=g++ >"$tmp/make.log" 2>&1 || { cat "$tmp/make.log" >&2; fail "make failed"; }

# A key with its certificate in one file (fixed serial: the SignedData is 3455 bytes).
"$openssl" genpkey -algorithm ML-DSA-65 -out "$tmp/key.pem" 2>/dev/null
"$openssl" req -x509 -new -key "$tmp/key.pem" -subj '/CN=api test/O=modsign' -days 30 \
  -set_serial 0x0123456789abcdef -out "$tmp/cert.pem" 2>/dev/null
cat "$tmp/cert.pem" >>"$tmp/key.pem"

for how in cmake make; do
  exe=$tmp/$how/sign_and_predict
  ! readelf -d "$exe" | grep -q 'R\(UN\)\?PATH' || fail "$how: the example has a run path"
  m=$tmp/$how/m.ko
  yes modsign | head -c 4096 >"$m"
  out=$(LD_LIBRARY_PATH=$libdir "$exe" "$tmp/key.pem" "$m") || fail "$how: exit status $?: $out"
  want="$m: signed (ML-DSA-65, sha512, CMS 3455 bytes)
v7.0: loads"
  [ "$out" = "$want" ] || fail "$how: output
$out
instead of
$want"
  [ "$(wc -c <"$m")" -eq $((4096 + 3455 + 12 + 28)) ] || fail "$how: signed module size $(wc -c <"$m")"
  # Signing it again is refused (already signed): exit status 2, the module unchanged.
  set +e
  err=$(LD_LIBRARY_PATH=$libdir "$exe" "$tmp/key.pem" "$m" 2>&1 >/dev/null); st=$?
  set -e
  [ "$st" -eq 2 ] && [ "$err" = "$exe: $m: module is already signed" ] || fail "$how: re-sign: status $st, '$err'"
done
# The installed CLI agrees.
"$prefix/bin/modsign" verify --cert "$tmp/cert.pem" "$tmp/make/m.ko" >"$tmp/verify.log" 2>&1 ||
  { cat "$tmp/verify.log" >&2; fail "installed modsign verify failed"; }
echo "consumer: find_package and pkg-config builds sign and predict as expected"
