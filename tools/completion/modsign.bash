# bash completion for modsign                                    -*- shell-script -*-
# Commands, subcommands and flags come from `modsign ... --help` itself (cached per
# shell), so the completion follows the binary on PATH.

declare -gA _modsign_help_cache

_modsign_help() {  # words... -> the --help text of that (sub)command
  local key="_ $*"
  if [[ -z ${_modsign_help_cache[$key]+set} ]]; then
    _modsign_help_cache[$key]=$("${_modsign_bin:-modsign}" "$@" --help 2>&1)
  fi
  printf '%s\n' "${_modsign_help_cache[$key]}"
}

# CLI11 heads its sections "Subcommands:"/"Options:" up to 2.5 and "SUBCOMMANDS:"/"OPTIONS:"
# from 2.6, where a long flag is also set apart from its short one ("-h,     --help").
_modsign_subcommands() {
  _modsign_help "$@" | awk 'tolower($0) ~ /^subcommands:/ {on=1; next} /^[A-Za-z]/ {on=0} on && /^  [a-z]/ {print $1}'
}

_modsign_flags() {
  if [[ $1 == sign-file ]]; then
    echo "-d -p -k -s"
    return
  fi
  _modsign_help "$@" | awk '
    tolower($0) ~ /^options:/ {on=1; next} /^[A-Za-z]/ {on=0}
    on && /^  +-/ && match($0, /^ +/) && RLENGTH <= 12 {  # deeper: a wrapped description
      # The name column: the leading runs (split at two or more spaces) that start with "-".
      line=$0; sub(/^ +/, "", line); names=""
      while (line ~ /^-/) {
        if (match(line, /  +/)) { names=names " " substr(line, 1, RSTART-1); line=substr(line, RSTART+RLENGTH) }
        else { names=names " " line; line="" }
      }
      m=split(names, w, /[ ,]/)
      for (i=1; i<=m; i++) { if (w[i] ~ /:$/) break; if (w[i] ~ /^--?[A-Za-z0-9][A-Za-z0-9-]*$/) print w[i] }  # not "Excludes: --x"
    }' | sort -u
}

_modsign_values() {  # words... flag -> the values CLI11 lists as {a,b,c}, if any
  local flag=${!#}
  _modsign_help "${@:1:$#-1}" | awk -v f="$flag" '
    /^  +-/ {
      line=$0; sub(/^ +/, "", line)
      split(line, w, /[ ,]/)
      for (i in w) if (w[i] == f && match(line, /\{[^}]*\}/)) {
        v=substr(line, RSTART+1, RLENGTH-2); gsub(/,/, " ", v); print v; exit
      }
    }'
}

_modsign() {
  local cur prev words cword
  if declare -F _init_completion >/dev/null; then
    _init_completion || return
  else
    cur=${COMP_WORDS[COMP_CWORD]}; prev=${COMP_WORDS[COMP_CWORD-1]}
    words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD
  fi
  _modsign_bin=${words[0]}

  local -a cmd=()
  local i
  for ((i = 1; i < cword; i++)); do
    [[ ${words[i]} == -* ]] && continue
    if ((${#cmd[@]} == 0)); then
      cmd=("${words[i]}")
    elif ((${#cmd[@]} == 1)) && [[ ${cmd[0]} == @(ima|blacklist|dbx|cms) ]]; then
      cmd+=("${words[i]}")
      break
    fi
  done

  if [[ $prev == -* && ${#cmd[@]} -gt 0 ]]; then
    local values
    case $prev in
      --algo) values="ml-dsa-44 ml-dsa-65 ml-dsa-87 rsa-2048 rsa-3072 rsa-4096 ecdsa-p256 ecdsa-p384" ;;
      --hash) values="sha256 sha384 sha512 sha3-256 sha3-384 sha3-512 sha224 sha1" ;;
      --ima-hash|--bank) values="md5 sha1 sha224 sha256 sha384 sha512 sha3-256 sha3-384 sha3-512" ;;
      --template) values="ima-modsig ima-sig ima-ng" ;;
      --variable) values="db dbx MokListRT MokListXRT" ;;
      --form) values="detect esl efivarfs auth2" ;;
      --arch) values="x64 ia32 aarch64 arm amd64 x86 arm64" ;;
      -r) COMPREPLY=($(compgen -d -- "$cur")); compopt -o filenames 2>/dev/null; return ;;
      -j|--jobs|--days|--max-size|--stream-above|--subject|--owner|--path) return ;;
      *) values=$(_modsign_values "${cmd[@]}" "$prev") ;;
    esac
    if [[ -n $values ]]; then
      COMPREPLY=($(compgen -W "$values" -- "$cur"))
      return
    fi
  fi

  if ((${#cmd[@]} == 0)); then
    if [[ $cur == -* ]]; then
      COMPREPLY=($(compgen -W "-h --help --version" -- "$cur"))
    else
      COMPREPLY=($(compgen -W "$(_modsign_subcommands)" -- "$cur"))
    fi
    return
  fi
  if ((${#cmd[@]} == 1)) && [[ ${cmd[0]} == @(ima|blacklist|dbx|cms) ]]; then
    COMPREPLY=($(compgen -W "$(_modsign_subcommands "${cmd[0]}") -h --help" -- "$cur"))
    return
  fi
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$(_modsign_flags "${cmd[@]}")" -- "$cur"))
    return
  fi
  COMPREPLY=($(compgen -f -- "$cur"))
  compopt -o filenames 2>/dev/null
}

complete -F _modsign modsign
