#!/bin/sh
# Every flag that `modsign <cmd> [<sub>] --help` prints must be on that command's page in
# docs/cli/ (as **FLAG**, the way the pages write options).  For sign-file, whose --help is
# getopt's usage text, the flags are the letters of its [-dpk] and -s, and -h/--help, which
# print that text.  Each page must also
# carry a go-md2man title line and NAME and SYNOPSIS sections, and every --help fit in 100
# columns.
#
#   tests/test_man_pages.sh MODSIGN DOCS_CLI_DIR            check the pages
#   tests/test_man_pages.sh --selftest MODSIGN DOCS_CLI_DIR  prove a missing flag is caught
set -u

if [ "${1:-}" = "--selftest" ]; then
  shift
  tmp=$(mktemp -d) || exit 2
  trap 'rm -rf "$tmp"' EXIT
  cp "$2"/*.md "$tmp"/ || exit 2
  # Remove every mention of one flag of `sign`: the check must now fail and name it.
  sed -i 's/\*\*--keyid\*\*/keyid/g' "$tmp/modsign-sign.1.md"
  out=$("$0" "$1" "$tmp" 2>&1)
  status=$?
  if [ "$status" -ne 1 ]; then
    echo "selftest: expected status 1 with --keyid removed, got $status"; echo "$out"; exit 1
  fi
  case "$out" in
    *"modsign-sign.1.md: missing --keyid (modsign sign --help)"*) echo "selftest: ok"; exit 0 ;;
  esac
  echo "selftest: the failure did not name --keyid:"; echo "$out"; exit 1
fi

modsign=$1
dir=$2
fail=0
checked=0

# Flags in the name column of CLI11's Options: section (text before the description;
# "OPTIONS:" from CLI11 2.6).
help_flags() {
  "$modsign" "$@" --help 2>/dev/null | awk '
    tolower($0) ~ /^options:/ { on = 1; next }
    /^[A-Za-z]/ { on = 0 }
    on && /^  +-/ && match($0, /^ +/) && RLENGTH <= 12 {  # deeper: a wrapped description
      # CLI11 2.6 sets a long flag apart from its short one ("-h,     --help"): the name
      # column is every leading run (split at two or more spaces) that starts with "-".
      line = $0; sub(/^ +/, "", line); names = ""
      while (line ~ /^-/) {
        if (match(line, /  +/)) { names = names " " substr(line, 1, RSTART - 1); line = substr(line, RSTART + RLENGTH) }
        else { names = names " " line; line = "" }
      }
      m = split(names, w, /[ ,]/)
      for (i = 1; i <= m; i++) if (w[i] ~ /^--?[A-Za-z0-9][A-Za-z0-9-]*$/) print w[i]
    }' | sort -u
}

subcommands() {
  "$modsign" "$@" --help 2>/dev/null | awk '
    tolower($0) ~ /^subcommands:/ { on = 1; next }
    /^[A-Za-z]/ { on = 0 }
    on && /^  [a-z]/ { print $1 }'
}

page_for() {
  if [ -f "$dir/modsign-$1.1.md" ]; then echo "$dir/modsign-$1.1.md"
  elif [ "$1" = extract ]; then echo "$dir/modsign-strip.1.md"
  else echo "$dir/modsign-$1.1.md"; fi
}

check_page_shape() {
  page=$1; name=$2
  head -n 1 "$page" | grep -Eq "^% $name\\(1\\) modsign [0-9][0-9.]* \\| modsign manual\$" ||
    { echo "$page: first line is not '% $name(1) modsign VERSION | modsign manual'"; fail=1; }
  grep -q '^# NAME$' "$page" || { echo "$page: no NAME section"; fail=1; }
  grep -q '^# SYNOPSIS$' "$page" || { echo "$page: no SYNOPSIS section"; fail=1; }
}

check_flags() {  # page, command words...
  page=$1; shift
  if [ ! -f "$page" ]; then echo "$page: missing page for modsign $*"; fail=1; return; fi
  flags=$(help_flags "$@")
  if [ -z "$flags" ]; then echo "modsign $* --help: no flags found"; fail=1; return; fi
  # The help fits a terminal of 100 columns (help_format.hpp's kHelpWidth).
  wide=$("$modsign" "$@" --help 2>/dev/null | awk 'length($0) > 100 { n++ } END { print n + 0 }')
  [ "$wide" -eq 0 ] || { echo "modsign $* --help: $wide lines wider than 100 columns"; fail=1; }
  for f in $flags; do
    checked=$((checked + 1))
    grep -Fq -- "**$f**" "$page" || { echo "$page: missing $f (modsign $* --help)"; fail=1; }
  done
}

"$modsign" --help >/dev/null 2>&1 || { echo "$modsign --help failed"; exit 2; }
check_page_shape "$dir/modsign.1.md" MODSIGN
check_flags "$dir/modsign.1.md"
cmds=$(subcommands)
[ -n "$cmds" ] || { echo "modsign --help lists no subcommands"; exit 2; }
for c in $cmds; do
  page=$(page_for "$c")
  if [ -f "$page" ]; then
    check_page_shape "$page" "$(basename "$page" .1.md | tr a-z A-Z)"
  fi
  if [ "$c" = sign-file ]; then
    usage=$("$modsign" sign-file --help 2>&1)
    letters=$(printf '%s\n' "$usage" | grep -Eo '\[-[a-z]+\]|(^| )-[a-z]( |$)' | tr -d '[]  -' | fold -w1 | sort -u)
    [ -n "$letters" ] || { echo "modsign sign-file --help: no getopt flags found"; fail=1; }
    for l in $letters h -help; do
      checked=$((checked + 1))
      grep -Fq -- "**-$l**" "$page" || { echo "$page: missing -$l (modsign sign-file usage)"; fail=1; }
    done
    continue
  fi
  check_flags "$page" "$c"
  for s in $(subcommands "$c"); do
    check_flags "$page" "$c" "$s"
  done
done

echo "checked $checked flags of $(echo "$cmds" | wc -w) commands against $dir"
[ "$fail" -eq 0 ] || exit 1
exit 0
