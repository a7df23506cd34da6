# shellcheck shell=bash
# tools/lib/apt-private.sh: a private apt configuration, sourced by tools/bootstrap-deps and
# tools/fetch-debian-kernel.
#
# The configuration lives entirely in one directory DIR (sources.list, lists/, cache/); its
# URI is that of the machine's own Debian archive (from /etc/apt), its suite is chosen by
# the caller.  Nothing under /etc/apt is ever written, nothing is installed.  The caller
# defines log() (one message on stderr).  Functions only; sourcing runs nothing.

apt_private_uri() {
  # First URI of a non-security Debian archive in the machine's apt sources.
  local f uri
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    # deb822: take URIs of stanzas whose Suites do not end in -security.
    uri=$(awk '
      /^[[:space:]]*$/ { if (u != "" && s !~ /-security/ && s != "") { print u; exit } u=""; s="" ; next }
      /^URIs:/ { u=$2 } /^Suites:/ { s=$0 }
      END { if (u != "" && s !~ /-security/ && s != "") print u }' "$f" | head -n1)
    case "$uri" in */debian|*/debian/) echo "${uri%/}"; return 0;; esac
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    uri=$(awk '$1=="deb" { for (i=2;i<=NF;i++) if ($i !~ /^\[/ && $i !~ /\]$/) { u=$i; s=$(i+1); break }
                             if (s !~ /-security/ && u ~ /\/debian\/?$/) { print u; exit } }' "$f")
    [ -n "$uri" ] && { echo "${uri%/}"; return 0; }
  done
  return 1
}

apt_private_get() {  # $1 DIR, then apt-get arguments
  local a=$1; shift
  apt-get -q -o Dir::Etc::SourceList="$a/sources.list" -o Dir::Etc::SourceParts="$a/sources.list.d" \
    -o Dir::State::Lists="$a/lists" -o Dir::Cache="$a/cache" -o Dir::State::status=/var/lib/dpkg/status \
    -o APT::Get::List-Cleanup=0 -o Debug::NoLocking=1 "$@"
}

apt_private_cache() {  # $1 DIR, then apt-cache arguments
  local a=$1; shift
  apt-cache -o Dir::Etc::SourceList="$a/sources.list" -o Dir::Etc::SourceParts="$a/sources.list.d" \
    -o Dir::State::Lists="$a/lists" -o Dir::Cache="$a/cache" "$@"
}

apt_private_stamp() {  # $1 DIR, $2 TYPES, then the update's apt options: its stamp file
  printf '%s/lists/.updated-%s' "$1" "$(printf '%s\n' "${2:-deb deb-src}" "${@:3}" | sha256sum | cut -c1-12)"
}

apt_private_fresh() {  # $1 DIR, $2 TYPES, then apt options: true if that update ran less than a day ago
  # A stamp written after each successful update: the lists themselves keep the archive's
  # date when they have not changed, which says nothing of when they were checked.
  [ -n "$(find "$(apt_private_stamp "$@")" -mtime -1 2>/dev/null)" ]
}

apt_private_setup() {
  # $1 DIR, $2 SUITE, $3 TYPES (default "deb deb-src"), $4 "force" to update in any case,
  # then apt options for the update (another architecture's -o APT::Architecture=...).
  # Writes DIR/sources.list (main component) and refreshes the lists at most once a day.
  # Returns non-zero (with a log line) if there is no Debian archive URI or the update fails.
  local a=$1 suite=$2 types=${3:-deb deb-src} force=${4:-} uri keyring t
  if [ $# -ge 4 ]; then shift 4; else shift $#; fi
  uri=$(apt_private_uri) || { log "no Debian archive found in /etc/apt sources"; return 1; }
  keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  mkdir -p "$a/sources.list.d" "$a/lists/partial" "$a/cache/archives/partial" || return
  for t in $types; do
    printf '%s [signed-by=%s] %s %s main\n' "$t" "$keyring" "$uri" "$suite"
  done > "$a/sources.list.new" || return
  mv "$a/sources.list.new" "$a/sources.list" || return
  # Refresh the package lists at most once a day.
  if [ "$force" = force ] || ! apt_private_fresh "$a" "$types" "$@"; then
    log "updating private apt lists (suite $suite${*:+, $*})"
    apt_private_get "$a" "$@" update >&2 || return
    touch "$(apt_private_stamp "$a" "$types" "$@")"
  fi
}

apt_private_mmdebstrap_opts() {
  # mmdebstrap options that carry the machine's own apt settings on the archive's dates
  # into a chroot (a mirror whose Release files are past Valid-Until is accepted where the
  # machine's apt accepts it), one per line.
  local o v
  for o in Acquire::Check-Valid-Until Acquire::Check-Date; do
    v=$(apt-config dump "$o" 2>/dev/null | sed -n "s/^$o \"\(.*\)\";\$/\1/p")
    [ -n "$v" ] && printf -- '--aptopt=%s "%s"\n' "$o" "$v"
  done
  return 0
}
