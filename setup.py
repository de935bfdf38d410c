"""Builds the mbridge-lint wheel (metadata in pyproject.toml): CMake builds the self-contained binary with the settings
of the `static` preset in CMakePresets.json, and the wheel carries it in the package `mbridge_lint` (bin/), with the
Bridge helper of `gpu-check --runner` (share/mbridge-lint/bridge, where the binary looks for it). The wheel is tagged
for the oldest glibc the binary asks for, since it holds no Python code that depends on the interpreter.

A checkout that is a release's commit (pre-commit's clone of `rev: vV`, say) takes the release's binary instead of
compiling (scripts/release_binary.py: the tarball of the release vV, its checksum and its --version checked against the
checkout's commit); anything else, or no release, builds from source, fetching the tree-sitter grammar first when the
checkout lacks it (scripts/setup.sh --grammar).

Environment: MBRIDGE_LINT_BUILD_DIR (default: the preset's folder, build-static) is the CMake build folder, so that
scripts/release.sh and pip share one build; CMAKE_ARGS adds configure arguments (say, compiler launchers);
MBRIDGE_LINT_RELEASE_URL names the release's folder (default: releases/download/vV/ of the GitHub repository that is
the checkout's `origin`), `none` always builds. Standard library, setuptools and wheel only (Debian's
python3-setuptools and python3-wheel)."""

import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py
from wheel.bdist_wheel import bdist_wheel

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "scripts"))
import release_binary  # noqa: E402  (scripts/release_binary.py, shared with the GitHub action)
PRESET = "static"


def static_preset():
    presets = json.loads((ROOT / "CMakePresets.json").read_text())["configurePresets"]
    return next(p for p in presets if p["name"] == PRESET)


def build_dir():
    named = os.environ.get("MBRIDGE_LINT_BUILD_DIR")
    if named:
        return Path(named).resolve()
    return Path(static_preset()["binaryDir"].replace("${sourceDir}", str(ROOT)))


def git(*args):
    """git's output in the checkout, or None outside one (an sdist) or without git."""
    try:
        return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def released_binary():
    """The release's binary when the checkout is the clean commit a release of VERSION was made from, else None."""
    version = (ROOT / "VERSION").read_text().strip()
    url = os.environ.get("MBRIDGE_LINT_RELEASE_URL")
    if url == "none":
        return None
    commit = git("rev-parse", "HEAD")
    if not commit or git("status", "--porcelain", "--untracked-files=no") != "":
        return None
    url = url or release_binary.github_release_url(git("remote", "get-url", "origin") or "", version)
    if not url:
        return None
    try:
        binary = release_binary.fetch(url, version, build_dir() / "release", commit)
    except release_binary.NoRelease as reason:
        print(f"mbridge-lint: building from source, no usable release: {reason}", file=sys.stderr)
        return None
    except release_binary.ChecksumMismatch as error:
        raise SystemExit(f"mbridge-lint: {error}") from None
    print(f"mbridge-lint: the binary of the release at {url}, nothing compiled", file=sys.stderr)
    return binary


def build_binary():
    """Configures and builds the mbridge-lint target; returns the binary's path."""
    preset = static_preset()
    folder = build_dir()
    if not (ROOT / "third_party" / "tree-sitter-python" / "src").is_dir():
        subprocess.run([str(ROOT / "scripts" / "setup.sh"), "--grammar"], check=True)
    configure = ["cmake", "-S", str(ROOT), "-B", str(folder)]
    if not (folder / "CMakeCache.txt").exists() and shutil.which("ninja"):
        configure += ["-G", preset.get("generator", "Ninja")]
    configure += [f"-D{key}={value}" for key, value in preset["cacheVariables"].items()]
    configure += shlex.split(os.environ.get("CMAKE_ARGS", ""))
    subprocess.run(configure, check=True)
    cache = (folder / "CMakeCache.txt").read_text()
    if not re.search(r"^MBRIDGE_LINT_STATIC:BOOL=ON$", cache, re.M):
        raise SystemExit(f"{folder} is not a static build (MBRIDGE_LINT_STATIC=ON): the wheel's binary must need "
                         "nothing but the C and C++ runtime")
    subprocess.run(["cmake", "--build", str(folder), "--target", "mbridge-lint"], check=True)
    return folder / "mbridge-lint"


def glibc_tag(binary):
    """manylinux_2_N_<arch>, N the newest glibc symbol version the binary needs (from its version references)."""
    needed = [int(m) for m in re.findall(rb"GLIBC_2\.(\d+)(?:\.\d+)?\x00", binary.read_bytes())]
    if not needed:
        raise SystemExit(f"{binary}: no glibc symbol versions found; is it a dynamically linked Linux binary?")
    return f"manylinux_2_{max(needed)}_{platform.machine()}"


class BuildWithBinary(build_py):
    """The package's Python files, then the binary and the Bridge helper beside them."""

    def run(self):
        package = Path(self.build_lib) / "mbridge_lint"
        shutil.rmtree(package, ignore_errors=True)  # the build folder is kept between builds: no stale files
        super().run()
        binary = released_binary() or build_binary()
        (package / "bin").mkdir(parents=True, exist_ok=True)
        shutil.copy2(binary, package / "bin" / "mbridge-lint")
        helper = package / "share" / "mbridge-lint" / "bridge"
        shutil.rmtree(helper, ignore_errors=True)
        shutil.copytree(ROOT / "integrations" / "bridge", helper,
                        ignore=shutil.ignore_patterns("test_*", "__pycache__"))


class BinaryDistribution(Distribution):
    """Holds a native binary: installed as platform-specific files (platlib), in a wheel that is not pure."""

    def has_ext_modules(self):
        return True


class PlatformWheel(bdist_wheel):
    """Any Python 3 on a glibc at least as new as the binary needs: no Python ABI in the tag."""

    def run(self):
        shutil.rmtree(self.bdist_dir, ignore_errors=True)  # what a failed build left would end up in this wheel
        super().run()

    def get_tag(self):
        return "py3", "none", glibc_tag(Path(self.bdist_dir) / "mbridge_lint" / "bin" / "mbridge-lint")


# setuptools' own build files go into the CMake build folder too, so that building writes nothing into the checkout.
SETUPTOOLS_DIR = build_dir() / "setuptools"
SETUPTOOLS_DIR.mkdir(parents=True, exist_ok=True)
setup(distclass=BinaryDistribution, cmdclass={"build_py": BuildWithBinary, "bdist_wheel": PlatformWheel},
      options={"build": {"build_base": str(SETUPTOOLS_DIR)}, "egg_info": {"egg_base": str(SETUPTOOLS_DIR)}})
