#!/bin/sh
# libmodsign.so.0 exports the API docs/api.md documents and nothing else.
#   exports.sh LIBRARY API_MD HEADER...
# Checks: SONAME libmodsign.so.0; every defined dynamic symbol (demangled) is modsign::NAME...
# (or typeinfo/vtable of one) where NAME is declared in the public headers, is listed in
# API_MD's table of headers (a `name` there) and is not an internal layer namespace; no
# std::, Botan or OpenSSL symbol; the facade calls are there.
set -eu
lib=$1; api_md=$2; shift 2
fail() { echo "exports.sh: $*" >&2; exit 1; }

soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libmodsign.so.0 ] || fail "SONAME is '$soname', not libmodsign.so.0"

# Names the public headers declare (classes, structs, enums, functions, aliases).
public=$(cat "$@" | grep -v '^ *//' | grep -oE '[A-Za-z_][A-Za-z0-9_]*' | sort -u)
# Names docs/api.md's table of headers lists (its rows: | `header.hpp` | `Name`, ... |).
documented=$(sed -n '/^## Headers/,/^## /p' "$api_md" | grep '^| `' | grep -oE '`[A-Za-z_][A-Za-z0-9_]*' | tr -d '`' | sort -u)
[ -n "$documented" ] || fail "$api_md: no table of headers under '## Headers'"
internal='common asn1 crypto cms kernel module digest blacklist api cli detail'

syms=$(nm -D --defined-only "$lib" | awk '$2 != "A" { print $3 }' | sed 's/@.*//' | c++filt)
n=0
while IFS= read -r s; do
  n=$((n + 1))
  name=${s#typeinfo name for }; name=${name#typeinfo for }; name=${name#vtable for }
  case "$name" in
    modsign::*) ;;
    *) fail "exported symbol outside namespace modsign: $s" ;;
  esac
  first=$(printf '%s\n' "${name#modsign::}" | sed 's/[^A-Za-z0-9_].*//')
  for ns in $internal; do
    [ "$first" != "$ns" ] || fail "internal namespace exported: $s"
  done
  printf '%s\n' "$public" | grep -qx -- "$first" || fail "'$first' is not declared in the public headers: $s"
  printf '%s\n' "$documented" | grep -qx -- "$first" || fail "'$first' is exported but not listed in $api_md: $s"
done <<EOT
$syms
EOT

for want in 'modsign::version()' 'modsign::sign_module_file(' 'modsign::predict_module_file(' \
            'modsign::Signer::load(' 'modsign::TrustStore::from_certificates(' 'modsign::KernelProfile::parse(' \
            'typeinfo for modsign::InputError' 'typeinfo for modsign::IoError' 'modsign::errno_name('; do
  printf '%s\n' "$syms" | grep -qF -- "$want" || fail "missing export: $want"
done
echo "libmodsign.so.0: $n exported symbols, all modsign:: names that $api_md lists"
