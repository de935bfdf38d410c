# Sourced by the package tests: a fresh Debian 12 root to install into, without compilers.
#   debian_root WORK [PACKAGE...]  unpacks a pristine minimal Debian 12 root into WORK/root, with PACKAGES installed by
#                                  apt, mounts its /proc and sets $root; debian_root_cleanup unmounts it.
#   in_root COMMAND...             runs COMMAND in it with a clean environment (PATH, HOME, LC_ALL).
# The pristine root (debootstrap --variant=minbase bookworm, from the mirror the host's apt uses, else Debian's) is kept
# as a tarball in $XDG_CACHE_HOME/mbridge-lint, and each package set's root beside it: building them downloads about
# 40 MB each and takes a few minutes, once. Needs root (chroot) and debootstrap; the caller exits 77 when not root.

debian_root_cache="${XDG_CACHE_HOME:-$HOME/.cache}/mbridge-lint"
# The tools of test_release.sh's root. pre-commit's nodeenv depends on gcc or nodejs: nodejs keeps the compiler out
# (make stays, which compiles nothing).
debian_root_release_tools=(python3-venv pre-commit git nodejs)

# One maker of each cached root at a time (the package tests may run side by side, and scripts/test.sh makes them
# ahead, beside them): the second waits, then finds the tarball made.
debian_root_lock() {  # TARBALL
  mkdir -p "$debian_root_cache"
  exec {debian_root_lock_fd}>"$1.lock"
  flock "$debian_root_lock_fd"
}
debian_root_unlock() { exec {debian_root_lock_fd}>&-; }

debian_root_base() {  # WORK: the cached minimal root's tarball, made once
  local work="$1" base="$debian_root_cache/debian12-minbase.tar" mirror
  debian_root_lock "$base"
  if [ ! -f "$base" ]; then
    mirror="$(grep -hoE '^URIs: *http[^ ]*/debian/?$' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1 | sed 's/^URIs: *//')"
    [ -n "$mirror" ] || mirror="$(grep -hoE '^deb +http[^ ]*/debian/? +bookworm' /etc/apt/sources.list 2>/dev/null | awk '{print $2}' | head -1)"
    mirror="${mirror:-http://deb.debian.org/debian}"
    echo "== debootstrap --variant=minbase bookworm from $mirror (once; kept in $base)" >&2
    debootstrap --variant=minbase bookworm "$work/seed" "$mirror" > "$work/debootstrap.log" 2>&1 ||
      { tail -30 "$work/debootstrap.log" >&2; echo "FAIL: debootstrap failed" >&2; debian_root_unlock; return 1; }
    tar -C "$work/seed" -cf "$base.tmp" . && mv "$base.tmp" "$base"
    rm -rf "$work/seed"
  fi
  debian_root_unlock
  echo "$base"
}

in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 "$@"; }

debian_root_cleanup() {
  if [ -n "${root:-}" ] && mountpoint -q "$root/proc" 2>/dev/null; then umount "$root/proc" || return 1; fi
}

debian_root_tarball() {  # PACKAGE...: the cached root with PACKAGES installed (none: the minimal root)
  if [ "$#" -gt 0 ]; then
    echo "$debian_root_cache/debian12-minbase+$(echo "$*" | tr ' ' '+').tar"
  else
    echo "$debian_root_cache/debian12-minbase.tar"
  fi
}

debian_root() {  # WORK PACKAGE...
  local work="$1" base tarball
  shift
  base="$(debian_root_base "$work")" || return 1
  tarball="$(debian_root_tarball "$@")"
  root="$work/root"
  mkdir "$root"
  [ "$#" -eq 0 ] || debian_root_lock "$tarball"
  if [ -f "$tarball" ]; then
    tar -C "$root" -xf "$tarball"
  else
    tar -C "$root" -xf "$base"
  fi
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  mount -t proc proc "$root/proc"  # as on any running system (binaries find their installed files through it)
  if [ "$#" -gt 0 ] && [ ! -f "$tarball" ]; then
    echo "== apt-get install $* (once; kept in $tarball)" >&2
    { in_root apt-get update -qq && in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" &&
      in_root apt-get clean; } > "$work/apt-tools.log" 2>&1 ||
      { tail -30 "$work/apt-tools.log" >&2; echo "FAIL: installing $* failed" >&2; debian_root_unlock; return 1; }
    tar -C "$root" --exclude=./proc/* -cf "$tarball.tmp" . && mv "$tarball.tmp" "$tarball"
  fi
  [ "$#" -eq 0 ] || debian_root_unlock
}
