#!/bin/sh
# A program built against an installed modsign, three ways: find_package(modsign 0.2 CONFIG)
# (examples/CMakeLists.txt), pkg-config with plain g++ (examples/Makefile, libmodsign.so.0)
# and `pkg-config --static` (libmodsign.a).  All run on a fresh module with an ML-DSA-65 key
# made here by openssl; the output lines are exact.
#   consumer.sh BUILD_DIR SOURCE_DIR CMAKE OPENSSL_BIN
# pkg-config runs with PKG_CONFIG_PATH naming the prefix's lib/pkgconfig alone: a private
# OpenSSL/Botan (tools/bootstrap-deps) is in modsign.pc's Libs.private, not its
# Requires.private, so neither link needs their .pc files.  The shared-library programs run
# with LD_LIBRARY_PATH naming the prefix alone (no run path is built into them);
# libmodsign.so.0 finds a private OpenSSL through its own run path.  The static one runs
# with LD_LIBRARY_PATH naming the directories of `pkg-config --static --libs-only-L`.
set -eu
build=$1 src=$2 cmake=$3 openssl=$4
fail() { echo "consumer.sh: $*" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/modsign-consumer.XXXXXX")
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

# 2. pkg-config and the Makefile (libmodsign.so.0).
export PKG_CONFIG_PATH="$libdir/pkgconfig"
unset PKG_CONFIG_LIBDIR PKG_CONFIG_SYSROOT_DIR
pkg-config --cflags --libs modsign >"$tmp/pc.log" 2>&1 || { cat "$tmp/pc.log" >&2; fail "pkg-config --cflags --libs modsign failed"; }
mkdir "$tmp/make"
cp "$src/examples/Makefile" "$src/examples/sign_and_predict.cpp" "$tmp/make/"
make -C "$tmp/make" CXX=g++ >"$tmp/make.log" 2>&1 || { cat "$tmp/make.log" >&2; fail "make failed"; }
readelf -d "$tmp/make/sign_and_predict" | grep -q 'NEEDED.*\[libmodsign\.so\.0\]' || fail "make: libmodsign.so.0 is not linked"

# 3. pkg-config --static: libmodsign.a (-l:libmodsign.a) and what its Libs.private and
# Requires.private name.
static_libs=$(pkg-config --static --libs modsign 2>"$tmp/pc.log") || { cat "$tmp/pc.log" >&2; fail "pkg-config --static --libs modsign failed"; }
static_libs=$(printf ' %s ' "$static_libs" | sed 's/ -lmodsign / -l:libmodsign.a /')
case "$static_libs" in *" -l:libmodsign.a "*) ;; *) fail "pkg-config --static: no -lmodsign in '$static_libs'";; esac
mkdir "$tmp/static"
g++ -std=c++20 -O2 $(pkg-config --cflags modsign) -o "$tmp/static/sign_and_predict" \
  "$src/examples/sign_and_predict.cpp" $static_libs >"$tmp/static.log" 2>&1 || { cat "$tmp/static.log" >&2; fail "static link failed ($static_libs)"; }
! readelf -d "$tmp/static/sign_and_predict" | grep -q 'NEEDED.*libmodsign' || fail "static: libmodsign.so is linked"
static_ld=$(pkg-config --static --libs-only-L modsign | sed 's/^ *-L//; s/ *-L/:/g; s/ *$//')

# A key with its certificate in one file (fixed serial: the SignedData is 3455 bytes).
"$openssl" genpkey -algorithm ML-DSA-65 -out "$tmp/key.pem" 2>/dev/null
"$openssl" req -x509 -new -key "$tmp/key.pem" -subj '/CN=api test/O=modsign' -days 30 \
  -set_serial 0x0123456789abcdef -out "$tmp/cert.pem" 2>/dev/null
cat "$tmp/cert.pem" >>"$tmp/key.pem"

for how in cmake make static; do
  exe=$tmp/$how/sign_and_predict
  ld=$libdir
  [ "$how" != static ] || ld=$static_ld
  ! readelf -d "$exe" | grep -q 'R\(UN\)\?PATH' || fail "$how: the example has a run path"
  m=$tmp/$how/m.ko
  yes modsign | head -c 4096 >"$m"
  out=$(LD_LIBRARY_PATH=$ld "$exe" "$tmp/key.pem" "$m") || fail "$how: exit status $?: $out"
  want="$m: signed (ML-DSA-65, sha512, CMS 3455 bytes)
v7.0: loads"
  [ "$out" = "$want" ] || fail "$how: output
$out
instead of
$want"
  [ "$(wc -c <"$m")" -eq $((4096 + 3455 + 12 + 28)) ] || fail "$how: signed module size $(wc -c <"$m")"
  # Signing it again is refused (already signed): exit status 2, the module unchanged.
  set +e
  err=$(LD_LIBRARY_PATH=$ld "$exe" "$tmp/key.pem" "$m" 2>&1 >/dev/null); st=$?
  set -e
  [ "$st" -eq 2 ] && [ "$err" = "$exe: $m: module is already signed" ] || fail "$how: re-sign: status $st, '$err'"
done
# The installed CLI agrees.
"$prefix/bin/modsign" verify --cert "$tmp/cert.pem" "$tmp/make/m.ko" >"$tmp/verify.log" 2>&1 ||
  { cat "$tmp/verify.log" >&2; fail "installed modsign verify failed"; }
# The installed man pages (built when go-md2man is found): modsign-extract is a page of its own.
if [ -d "$prefix/share/man/man1" ] && command -v man >/dev/null; then
  [ -f "$prefix/share/man/man1/modsign-extract.1" ] || fail "modsign-extract.1 not installed"
  out=$(MANWIDTH=80 man -M "$prefix/share/man" modsign-extract 2>"$tmp/man.log") || fail "man -M PREFIX/share/man modsign-extract: $out"
  printf '%s\n' "$out" | head -n 1 | grep -q '^MODSIGN-EXTRACT(1) ' || fail "man modsign-extract: $(printf '%s\n' "$out" | head -n 3)"
fi
echo "consumer: find_package, pkg-config and pkg-config --static builds sign and predict as expected"
