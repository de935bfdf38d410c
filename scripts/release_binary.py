#!/usr/bin/env python3
"""The released mbridge-lint binary, in place of a build from source, when a release of this version exists.

A release (scripts/release.sh, .github/workflows/release.yml) holds mbridge-lint-V-linux-ARCH.tar.gz and SHA256SUMS.
This downloads both from the release's folder (a URL: GitHub's releases/download/vV/, or file:// for a local dist/),
checks the tarball against SHA256SUMS, unpacks the binary and runs its --version: the binary is used only when it is
version V and, where the caller knows the commit of its source tree, built from that very commit. Anything else (no
release, no network, another commit) answers "build from source" with the reason. A checksum that does not match is
an error, never a reason to build: someone served a file that is not the release.

Used by setup.py (the pre-commit hook `language: python` installs without compiling when its checkout is a release)
and by the GitHub action (integrations/github/action.sh). Standard library only.

Usage: release_binary.py --release-url URL --version V [--commit SHA] --dest DIR
  prints the binary's path (exit 0); exit 3 with the reason on stderr when there is no usable release; exit 1 on a
  checksum that does not match.
"""

import argparse
import hashlib
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import urllib.error
import urllib.request
from pathlib import Path

TIMEOUT_S = 30


class NoRelease(Exception):
    """There is no usable release: build from source (the message says why)."""


class ChecksumMismatch(Exception):
    """The download is not the release SHA256SUMS describes."""


def tarball_name(version):
    return f"mbridge-lint-{version}-linux-{platform.machine()}.tar.gz"


def github_release_url(remote, version):
    """releases/download/vVERSION/ of a GitHub repository named by a git remote URL (https or ssh), else None."""
    match = re.match(r"^(?:https://github\.com/|git@github\.com:|ssh://git@github\.com/)([\w.-]+)/([\w.-]+?)(?:\.git)?/?$",
                     remote.strip())
    if not match:
        return None
    return f"https://github.com/{match.group(1)}/{match.group(2)}/releases/download/v{version}"


def download(url):
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as response:
            return response.read()
    except (urllib.error.URLError, OSError, ValueError) as error:
        reason = getattr(error, "reason", error)
        raise NoRelease(f"{url}: {reason}") from None


def expected_sha256(sums, name):
    for line in sums.decode("utf-8", "replace").splitlines():
        digest, _, file_name = line.partition("  ")
        if file_name.strip() == name:
            return digest.strip()
    raise NoRelease(f"SHA256SUMS lists no {name}")


def unpack_binary(tarball, dest):
    """The one member STEM/mbridge-lint of the tarball, written to dest/mbridge-lint (nothing else is extracted)."""
    stem = tarball.name[: -len(".tar.gz")]
    with tarfile.open(tarball) as archive:
        try:
            member = archive.getmember(f"{stem}/mbridge-lint")
        except KeyError:
            raise NoRelease(f"{tarball.name} holds no {stem}/mbridge-lint") from None
        if not member.isfile():
            raise NoRelease(f"{stem}/mbridge-lint in {tarball.name} is not a file")
        binary = dest / "mbridge-lint"
        with archive.extractfile(member) as source, open(binary, "wb") as target:
            shutil.copyfileobj(source, target)
    binary.chmod(0o755)
    return binary


def check_identity(binary, version, commit):
    """The binary says `mbridge-lint VERSION (commit C)`: VERSION must match, and C must be a prefix of commit."""
    try:
        first = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=TIMEOUT_S,
                               check=True).stdout.partition("\n")[0]
    except (OSError, subprocess.SubprocessError) as error:
        raise NoRelease(f"the released binary does not run here: {error}") from None
    match = re.match(r"^mbridge-lint (\S+) \(commit ([^)]*)\)", first)
    if not match or match.group(1) != version:
        raise NoRelease(f"the released binary says \"{first}\", not version {version}")
    built_from = match.group(2)
    if commit and not (re.fullmatch(r"[0-9a-f]{7,40}", built_from) and commit.startswith(built_from)):
        raise NoRelease(f"the release was built from commit {built_from}, this source tree is {commit[:12]}")


def fetch(release_url, version, dest, commit=None):
    """The released binary in dest (created), checked as the module's docstring says; raises NoRelease or
    ChecksumMismatch."""
    base = release_url.rstrip("/")
    name = tarball_name(version)
    sums = download(f"{base}/SHA256SUMS")
    digest = expected_sha256(sums, name)
    data = download(f"{base}/{name}")
    if hashlib.sha256(data).hexdigest() != digest:
        raise ChecksumMismatch(f"{base}/{name} does not match its SHA256SUMS entry {digest}")
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    tarball = dest / name
    tarball.write_bytes(data)
    try:
        binary = unpack_binary(tarball, dest)
    finally:
        tarball.unlink()
    check_identity(binary, version, commit)
    return binary


def main():
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--release-url", required=True)
    parser.add_argument("--version", required=True)
    parser.add_argument("--commit")
    parser.add_argument("--dest", required=True)
    args = parser.parse_args()
    try:
        print(fetch(args.release_url, args.version, args.dest, args.commit))
    except NoRelease as reason:
        print(f"no usable release: {reason}", file=sys.stderr)
        return 3
    except ChecksumMismatch as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
