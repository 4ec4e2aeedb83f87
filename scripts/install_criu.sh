#!/usr/bin/env bash
# Install CRIU >= 4.2 into a private prefix, for AdaRoll's `criu` snapshot backend.
#
# Why this way (docs/architecture.md, "Platform notes"): Debian bookworm's criu 3.17 fails on this kernel (vDSO),
# while criu 4.2.x from Debian sid works. Installing sid's criu with apt would drag in sid's
# libc6 and replace system libraries, so instead we
#   1. write a *private* apt configuration (a deb822 sources file for suite sid in
#      PREFIX/apt/parts, reusing the mirror URI of the machine's own Debian sources, plus private
#      lists and cache folders) - the system's apt sources and state are never touched;
#   2. `apt-get download` criu and every library it needs (recursive Depends, all libraries);
#   3. `dpkg -x` each .deb into PREFIX (nothing is registered with dpkg);
#   4. write PREFIX/bin/criu, a wrapper that runs the binary through the prefix's own loader
#      with --library-path (not LD_LIBRARY_PATH, so programs criu starts - action scripts,
#      `ip` - keep using the system's libraries).
# Finally `criu check` runs and its result is printed; the script exits with its status.
#
# Idempotent and quiet: when PREFIX/bin/criu already reports a version >= 4.2 nothing is
# downloaded again. Needs root. Environment:
#   ADAROLL_CRIU_PREFIX   install prefix (default /opt/adaroll-criu)
#   ADAROLL_CRIU_SUITE    Debian suite to take criu from (default sid)
#   ADAROLL_CRIU_FORCE=1  re-download and re-unpack even if a good criu is present
set -euo pipefail

PREFIX="${ADAROLL_CRIU_PREFIX:-/opt/adaroll-criu}"
SUITE="${ADAROLL_CRIU_SUITE:-sid}"
MIN_MAJOR=4
MIN_MINOR=2
ARCH_TRIPLET="x86_64-linux-gnu"
log() { echo "install_criu.sh: $*" >&2; }

if [ "$(id -u)" -ne 0 ]; then
  log "must run as root (criu itself needs root, and so do unshare/nsenter)"
  exit 1
fi
if [ "$(uname -m)" != "x86_64" ]; then
  log "only x86_64 is supported (got $(uname -m))"
  exit 1
fi

# -- system tools the backend drives: unshare/nsenter (util-linux), ip (iproute2: criu runs it
#    when it rebuilds a network namespace that is not external), mount (the tests' checks).
#    Installed through the system's own apt.
need=()
command -v unshare >/dev/null 2>&1 || need+=(util-linux)
command -v nsenter >/dev/null 2>&1 || need+=(util-linux)
command -v ip >/dev/null 2>&1 || need+=(iproute2)
command -v mount >/dev/null 2>&1 || need+=(mount)
if [ ${#need[@]} -gt 0 ]; then
  log "apt-get install ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends $(printf '%s\n' "${need[@]}" | sort -u) >/dev/null
fi

version_ok() {  # $1 = output of `criu --version`
  local v major minor
  v="$(printf '%s\n' "$1" | sed -n 's/^Version: *\([0-9][0-9.]*\).*/\1/p' | head -n1)"
  [ -n "$v" ] || return 1
  major="${v%%.*}"; minor="${v#*.}"; minor="${minor%%.*}"
  [ "$major" -gt "$MIN_MAJOR" ] || { [ "$major" -eq "$MIN_MAJOR" ] && [ "$minor" -ge "$MIN_MINOR" ]; }
}

WRAPPER="$PREFIX/bin/criu"
if [ "${ADAROLL_CRIU_FORCE:-0}" != "1" ] && [ -x "$WRAPPER" ] \
   && version_ok "$("$WRAPPER" --version 2>/dev/null || true)"; then
  log "criu already installed in $PREFIX ($("$WRAPPER" --version | head -n1))"
else
  # -- find the Debian mirror from the machine's own apt sources (never a hard-coded host).
  #    deb822 files first (Types: deb / URIs: ...), then one-line sources.list entries;
  #    security and updates archives are skipped: they do not carry sid.
  mirror=""
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    mirror="$(awk '
      function flush() { if (deb && uri ~ /^https?:\/\// && !sec && !done) { print uri; done = 1 } }
      /^[[:space:]]*$/ { flush(); deb = 0; uri = ""; sec = 0; next }
      /^Types:/  { if ($0 ~ /[[:space:]]deb([[:space:]]|$)/) deb = 1 }
      /^URIs:/   { uri = $2; if ($2 ~ /security/) sec = 1 }
      /^Suites:/ { if ($0 ~ /-security/) sec = 1 }
      END { flush() }
    ' "$f" | head -n1)"
    [ -n "$mirror" ] && break
  done
  if [ -z "$mirror" ]; then
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
      [ -f "$f" ] || continue
      mirror="$(sed -e 's/#.*//' "$f" | awk '$1 == "deb" {
          i = 2; if ($2 ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
          if ($i !~ /security/ && $(i+1) !~ /-security|-updates|-backports/) { print $i; exit } }')"
      [ -n "$mirror" ] && break
    done
  fi
  if [ -z "$mirror" ]; then
    log "no Debian mirror found in /etc/apt/sources.list.d/*.sources or /etc/apt/sources.list"
    exit 1
  fi
  mirror="${mirror%/}"
  keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  log "mirror $mirror (from the system's apt sources), suite $SUITE, prefix $PREFIX"

  APTDIR="$PREFIX/apt"
  mkdir -p "$APTDIR/parts" "$APTDIR/lists/partial" "$APTDIR/cache/archives/partial" "$APTDIR/debs"
  cat >"$APTDIR/parts/adaroll-criu.sources" <<EOF
Types: deb
URIs: $mirror
Suites: $SUITE
Components: main
Signed-By: $keyring
EOF
  APT_OPTS=(
    -o "Dir::Etc::SourceList=/dev/null"
    -o "Dir::Etc::SourceParts=$APTDIR/parts"
    -o "Dir::Etc::Preferences=/dev/null"
    -o "Dir::Etc::PreferencesParts=/dev/null"
    -o "Dir::State::Lists=$APTDIR/lists"
    -o "Dir::Cache=$APTDIR/cache"
    -o "APT::Sandbox::User=root"
  )
  apt-get "${APT_OPTS[@]}" -qq update >/dev/null
  # criu plus its whole Depends closure; in sid that is libraries only (libc6, libcompel1,
  # libnet9, libnl-3-200, libprotobuf-c1, libgnutls30t64, libnftables1 and what they need).
  mapfile -t pkgs < <(apt-cache "${APT_OPTS[@]}" depends --recurse --no-recommends \
      --no-suggests --no-conflicts --no-breaks --no-replaces --no-enhances criu \
      | grep -v '^ ' | grep -v '^<' | sort -u)
  if [ ${#pkgs[@]} -eq 0 ] || ! printf '%s\n' "${pkgs[@]}" | grep -qx criu; then
    log "criu not found in suite $SUITE at $mirror"
    exit 1
  fi
  rm -f "$APTDIR/debs"/*.deb
  (cd "$APTDIR/debs" && apt-get "${APT_OPTS[@]}" -qq download "${pkgs[@]}" >/dev/null)
  rm -rf "$PREFIX/root"
  mkdir -p "$PREFIX/root"
  for deb in "$APTDIR/debs"/*.deb; do
    dpkg -x "$deb" "$PREFIX/root"
  done
  ROOT="$PREFIX/root"
  loader="$ROOT/usr/lib/$ARCH_TRIPLET/ld-linux-x86-64.so.2"
  [ -e "$loader" ] || loader="$ROOT/lib/$ARCH_TRIPLET/ld-linux-x86-64.so.2"
  if [ ! -e "$loader" ] || [ ! -x "$ROOT/usr/sbin/criu" ]; then
    log "unpacked packages lack the loader or usr/sbin/criu"
    exit 1
  fi
  mkdir -p "$PREFIX/bin"
  tmp="$(mktemp "$PREFIX/bin/.criu.XXXXXX")"
  cat >"$tmp" <<EOF
#!/bin/sh
# Generated by AdaRoll's scripts/install_criu.sh: criu $SUITE from $mirror, run through its
# own loader and libraries so that no system library is replaced.
exec "$loader" --library-path "$ROOT/lib/$ARCH_TRIPLET:$ROOT/usr/lib/$ARCH_TRIPLET" "$ROOT/usr/sbin/criu" "\$@"
EOF
  chmod 0755 "$tmp"
  mv -f "$tmp" "$WRAPPER"
  rm -rf "$APTDIR/cache/archives"/*.deb "$APTDIR/debs"
  if ! version_ok "$("$WRAPPER" --version 2>&1 || true)"; then
    log "installed criu does not run or is older than $MIN_MAJOR.$MIN_MINOR:"
    "$WRAPPER" --version >&2 || true
    exit 1
  fi
  log "installed $("$WRAPPER" --version | head -n1) (${#pkgs[@]} packages) -> $WRAPPER"
fi

# `rlimit: Can't setup RLIMIT_NOFILE` is harmless noise on VMs without CAP_SYS_RESOURCE.
set +e
out="$("$WRAPPER" check 2>&1)"
rc=$?
set -e
printf '%s\n' "$out" | grep -v -e "RLIMIT_NOFILE" -e "kdat cache" >&2 || true
if [ $rc -eq 0 ]; then
  echo "criu check: OK ($WRAPPER)"
else
  echo "criu check: FAILED (exit $rc) ($WRAPPER)"
fi
exit $rc
