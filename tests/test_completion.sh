#!/bin/bash
# The bash completion offers modsign's commands, subcommands, flags and option values.
#   tests/test_completion.sh MODSIGN tools/completion/modsign.bash
set -u
modsign=$1
# shellcheck source=/dev/null
source "$2"
fail=0

complete_line() {  # words of the line, the last one being completed
  COMP_WORDS=("$modsign" "$@"); COMP_CWORD=$#; COMPREPLY=()
  _modsign
  printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
}

expect() {  # expected reply, words...
  local want=$1; shift
  local got; got=$(complete_line "$@")
  if [[ $got != "$want" ]]; then
    echo "modsign $*<TAB>: expected '$want', got '$got'"; fail=1
  fi
}

expect "blacklist cms dbx digest extract ima info keygen sign sign-file strip verify" ""
expect "dump" cms d
expect "--cert --content" cms verify --c
expect "sign sign-file" "si"
expect "--kernel-build --kernel-config --key --keyid" sign --ke
expect "add-cert add-hash" dbx add-
expect "v6 v6.1 v7.0 v7.1 v7.2" verify --kernel ""
expect "auto botan openssl" sign --backend ""
expect "batch each none" sign --sync ""
expect "ml-dsa-44 ml-dsa-65 ml-dsa-87" keygen --algo ml-
expect "--awk-only" blacklist lint --aw
expect "--side-sha256" ima template --side
expect "-d -k -p -s" sign-file -
expect "--version" --v

# Every flag of every command is offered after "-".
for c in $("$modsign" --help | awk 'tolower($0) ~ /^subcommands:/ {on=1; next} /^[A-Za-z]/ {on=0} on && /^  [a-z]/ {print $1}'); do
  [[ $c == sign-file ]] && continue
  if [[ $c == @(ima|blacklist|dbx|cms) ]]; then
    subs=$("$modsign" "$c" --help | awk 'tolower($0) ~ /^subcommands:/ {on=1; next} /^[A-Za-z]/ {on=0} on && /^  [a-z]/ {print $1}')
  else
    subs=_
  fi
  for s in $subs; do
    words=("$c"); [[ $s != _ ]] && words+=("$s")
    offered=" $(complete_line "${words[@]}" -) "
    for f in $("$modsign" "${words[@]}" --help | grep -Eo '^ {2,12}-[^ ]*( [A-Z]|,-[-a-z]+| +--[a-z][-a-z0-9]*)*' | grep -Eo -- '--?[a-z][a-z0-9-]*'); do
      [[ $offered == *" $f "* ]] || { echo "modsign ${words[*]} -<TAB>: $f not offered"; fail=1; }
    done
  done
done

[[ $fail -eq 0 ]] && echo "completion: ok"
exit $fail
