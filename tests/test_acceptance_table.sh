#!/bin/sh
# test_acceptance_table.sh MODSIGN TOOL DOC: the table between DOC's acceptance-table markers
# (docs/at-a-glance.md) is what TOOL (tools/acceptance-table) prints with this build's
# MODSIGN, so the document says what modsign predicts.  Fails with the difference.
set -eu
modsign=$1 tool=$2 doc=$3
want=$(sed -n '/^<!-- acceptance-table: begin/,/^<!-- acceptance-table: end/p' "$doc" | sed '1d;$d')
[ -n "$want" ] || { echo "test_acceptance_table: no table between the acceptance-table markers of $doc"; exit 1; }
got=$("$tool" "$modsign")
[ "$got" = "$want" ] && exit 0
echo "test_acceptance_table: $doc's table differs from what $tool prints (< document, > modsign):"
printf '%s\n' "$want" >"${TMPDIR:-/tmp}/acceptance-want.$$"
printf '%s\n' "$got" | diff "${TMPDIR:-/tmp}/acceptance-want.$$" - || true
rm -f "${TMPDIR:-/tmp}/acceptance-want.$$"
exit 1
