#!/bin/sh
# Every built page in MAN_DIR is a page of its own (a .TH title, no .so link) that
# `man -l` renders under its file's name; modsign-extract.1 in particular (the strip page
# rendered under extract's name).
#   tests/test_man_render.sh MAN_DIR
set -u
dir=$1
fail=0
n=0
err=$(mktemp) || exit 2
trap 'rm -f "$err"' EXIT
[ -f "$dir/modsign-extract.1" ] || { echo "$dir/modsign-extract.1: missing"; exit 1; }
for page in "$dir"/*.1; do
  n=$((n + 1))
  name=$(basename "$page" .1)
  title=$(printf '%s' "$name" | tr a-z A-Z)
  if grep -q '^\.so ' "$page"; then echo "$page: a .so link"; fail=1; continue; fi
  grep -q "^\\.TH $title 1 " "$page" || { echo "$page: no '.TH $title 1' line"; fail=1; }
  # A text line that starts with . or ' is a roff request, and its text is lost (a wrapped
  # "..." at the start of a source line did that to modsign-sign(1)). A roff comment ('\"
  # or .\") is not text: newer go-md2man starts a page that has tables with '\" t.
  if grep -n -e '^\.[^A-Za-z\]' -e "^'" "$page" | grep -v -e '^[0-9]*:['"'"'.]\\"'; then
    echo "$page: text lines roff takes as requests (above)"; fail=1
  fi
  # (stderr apart: groff warns about wide tables there)
  out=$(MANWIDTH=80 man -l "$page" 2>"$err") || { echo "man -l $page failed: $(cat "$err")"; fail=1; continue; }
  printf '%s\n' "$out" | head -n 1 | grep -q "^$title(1) " ||
    { echo "man -l $page: first line is not $title(1)"; fail=1; }
  printf '%s\n' "$out" | grep -q "^ *$name[, ]" || { echo "man -l $page: NAME does not start with $name"; fail=1; }
done
echo "rendered $n pages in $dir"
exit $fail
