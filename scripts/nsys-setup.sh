#!/usr/bin/env bash
# A real Nsight Systems for the tests that profile pgdoctor runs: Debian bookworm non-free
# `nsight-systems` + `nsight-systems-target` 2022.4 (~170 MB of .deb), unpacked with
# `dpkg-deb -x` into a cache outside the clone, never installed (installing pulls libcuda1 and
# glx diversions). Debian's `libssh-4` is unpacked into the same tree: the importer
# (host-linux-x64/QdstrmImporter) links `libssh.so`, which the package ships as a symlink to
# ../../x86_64-linux-gnu/libssh.so.4, so that symlink resolves inside the tree.
#
# The .debs and the tree stay cached: a second run checks the tree and returns in well under a
# second. Nothing on the system changes: when the system's apt sources do not offer the package
# (bookworm ships with `main` only), apt runs on a private sources list and private package
# lists under the cache, so this works without root too.
#
# Prints the path of `nsys` on success. On failure it writes the reason to
# $CACHE/unavailable.txt (the tests skip with it) and exits 1.
#
# Environment: PGDOCTOR_CACHE (default ${XDG_CACHE_HOME:-~/.cache}/pgdoctor),
# PGDOCTOR_DEBIAN_MIRROR (default http://deb.debian.org/debian).
set -euo pipefail

CACHE="${PGDOCTOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pgdoctor}/nsys"
MIRROR="${PGDOCTOR_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
PACKAGES=(nsight-systems nsight-systems-target libssh-4)
TREE="$CACHE/tree"
NSYS="$TREE/usr/bin/nsys"
TARGET="$TREE/usr/lib/x86_64-linux-gnu/nsight-systems/target-linux-x64"
mkdir -p "$CACHE"

fail() {
  echo "$*" >"$CACHE/unavailable.txt"
  echo "nsys-setup: $*" >&2
  exit 1
}

# The cached tree is complete when the stamp written last by a previous run is there and the
# binaries run.
if [ -f "$TREE/.complete" ] && "$NSYS" --version >/dev/null 2>&1; then
  rm -f "$CACHE/unavailable.txt"
  echo "$NSYS"
  exit 0
fi

[ "$(uname -m)" = x86_64 ] || fail "Nsight Systems from Debian is x86_64 only (this is $(uname -m))"
command -v apt-get >/dev/null || fail "no apt-get here: Debian's nsight-systems cannot be had"
command -v dpkg-deb >/dev/null || fail "no dpkg-deb here: cannot unpack nsight-systems"

DEBS="$CACHE/debs"
mkdir -p "$DEBS"
have_debs() {
  local p
  for p in "${PACKAGES[@]}"; do
    compgen -G "$DEBS/${p}_*.deb" >/dev/null || return 1
  done
}

if ! have_debs; then
  # The system's sources first (a machine with non-free enabled, or a local mirror); else a
  # private apt configuration under the cache with bookworm main + non-free.
  apt_opts=()
  if [ "$(id -u)" = 0 ]; then apt-get update -qq >/dev/null 2>&1 || true; fi
  candidate=$(apt-cache policy nsight-systems 2>/dev/null | awk '/Candidate:/ {print $2}')
  if [ -z "$candidate" ] || [ "$candidate" = "(none)" ]; then
    APT="$CACHE/apt"
    mkdir -p "$APT/lists/partial" "$APT/cache/archives/partial"
    echo "deb $MIRROR bookworm main non-free" >"$APT/sources.list"
    apt_opts=(-o "Dir::Etc::SourceList=$APT/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
              -o "Dir::State::Lists=$APT/lists" -o "Dir::Cache=$APT/cache")
    [ "$(id -u)" = 0 ] && apt_opts+=(-o "APT::Sandbox::User=root")
    apt-get "${apt_opts[@]}" update -qq >/dev/null 2>"$CACHE/apt-update.log" \
      || fail "apt-get update on $MIRROR bookworm non-free failed: $(tail -1 "$CACHE/apt-update.log")"
    candidate=$(apt-cache "${apt_opts[@]}" policy nsight-systems | awk '/Candidate:/ {print $2}')
    if [ -z "$candidate" ] || [ "$candidate" = "(none)" ]; then
      fail "nsight-systems is not offered by $MIRROR bookworm non-free"
    fi
  elif [ "$(id -u)" = 0 ]; then
    apt_opts=(-o "APT::Sandbox::User=root")
  fi
  case "$candidate" in
    2022.4.*) ;;
    *) echo "nsys-setup: nsight-systems $candidate (the tests were written against 2022.4)" >&2 ;;
  esac
  (cd "$DEBS" && rm -f ./*.deb && apt-get "${apt_opts[@]}" download -qq "${PACKAGES[@]}" \
      >/dev/null 2>"$CACHE/apt-download.log") \
    || fail "apt-get download ${PACKAGES[*]} failed: $(tail -1 "$CACHE/apt-download.log")"
fi

# Unpack into a fresh directory and move it into place, so an interrupted run never leaves a
# half tree that looks complete.
rm -rf "$TREE" "$TREE.new"
mkdir -p "$TREE.new"
for deb in "$DEBS"/*.deb; do
  dpkg-deb -x "$deb" "$TREE.new" || fail "dpkg-deb -x $deb failed"
done
# nsys resolves its own directory (target-linux-x64) and looks for the importer next to it,
# in ../host-linux-x64; Debian splits the two between /usr/lib and /usr/lib/x86_64-linux-gnu.
ln -sfn ../../nsight-systems/host-linux-x64 \
  "$TREE.new/usr/lib/x86_64-linux-gnu/nsight-systems/host-linux-x64"
mv "$TREE.new" "$TREE"

"$NSYS" --version >/dev/null 2>&1 || fail "the unpacked nsys does not run: $("$NSYS" --version 2>&1 | tail -1)"
missing=$(ldd "$TARGET/../host-linux-x64/QdstrmImporter" 2>/dev/null | awk '/not found/ {print $1}' | sort -u | tr '\n' ' ')
[ -z "$missing" ] || fail "QdstrmImporter is missing libraries: $missing"
(cd "$DEBS" && ls ./*.deb) >"$TREE/.complete"
rm -f "$CACHE/unavailable.txt"
echo "$NSYS"
