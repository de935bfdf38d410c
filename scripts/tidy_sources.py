#!/usr/bin/env python3
"""The sources scripts/clang-tidy.sh checks when MBRIDGE_LINT_TIDY_SINCE names a commit: those whose translation unit
reads a file changed since it, committed or not, by the build's record of each object's inputs (`ninja -t deps`). A
source that reads nothing changed gives the findings it gave at that commit. Every source is picked when the change
reaches them all (.clang-tidy, scripts/clang-tidy.sh, CMake files and presets, schemas/: flags and generated
headers), when git or ninja cannot tell, and a source the build has no record of is always picked.
Usage: scripts/tidy_sources.py ROOT BUILD_DIR FILE_REGEX [--since REF | --changed FILE...] [--translation-units]
(neither --since nor --changed: every source the regex matches)
--translation-units names what clang-tidy runs on: the unity batches (CMake's Unity/unity_N_cxx.cxx) that hold the
picked sources, each parsed once for its members as the compiler does (a third of the time), and the sources that
compile alone.
Prints a regex matching exactly the picked sources (nothing when none), and a one-line account on standard error."""
import argparse
import json
import os
import re
import subprocess
import sys

REACHES_ALL = re.compile(r"(\.clang-tidy$|scripts/clang-tidy\.sh$|scripts/tidy_sources\.py$|CMakePresets\.json$"
                         r"|cmake/|schemas/|(.*/)?CMakeLists\.txt$)")


def run(*args):
    return subprocess.run(args, capture_output=True, text=True)


def changed_since(root, since):
    """Repository-relative paths changed since the commit (tracked changes and new files); None when git cannot tell."""
    diff = run("git", "-C", root, "diff", "--name-only", since, "--")
    untracked = run("git", "-C", root, "ls-files", "--others", "--exclude-standard")
    if diff.returncode or untracked.returncode:
        return None
    return [p for p in (diff.stdout + untracked.stdout).splitlines() if p]


UNITY_MEMBER = re.compile(r'^#include "(.+)"$', re.M)


def unity_members(path):
    """The sources a unity batch file (CMake's Unity/unity_N_cxx.cxx) includes, in order; [] for any other file."""
    if "/Unity/unity_" not in path:
        return []
    with open(path) as f:
        return UNITY_MEMBER.findall(f.read())


def source_entries(build):
    """The build's compile commands, one per source: a unity batch's entry stands for each source it includes."""
    with open(os.path.join(build, "compile_commands.json")) as f:
        entries = json.load(f)
    out = []
    for e in entries:
        members = unity_members(e["file"])
        if not members:
            out.append(e)
        for member in members:
            out.append({**e, "file": member, "command": e["command"].replace(e["file"], member),
                        "output": e.get("output", "")})
    return out


def translation_units(build, sources):
    """The compile database's files that compile `sources`: a unity batch for its members, else the source."""
    with open(os.path.join(build, "compile_commands.json")) as f:
        files = [e["file"] for e in json.load(f)]
    wanted, out = set(sources), []
    for tu in files:
        members = unity_members(tu) or [tu]
        if wanted.intersection(members) and tu not in out:
            out.append(tu)
    return sorted(out)


def inputs_by_source(build):
    """Each compiled source -> the files its object was built from; None when ninja has no record. A unity batch's
    inputs are shared by its members, less the other members' own sources, so that a changed source picks itself."""
    deps = run("ninja", "-C", build, "-t", "deps")
    if deps.returncode:
        return None
    reads, inputs = {}, None
    for line in deps.stdout.splitlines():
        if line and not line[0].isspace():
            inputs = []  # the next object's inputs; the first is its source
        elif line.strip() and inputs is not None:
            inputs.append(os.path.normpath(os.path.join(build, line.strip())))
            reads.setdefault(inputs[0], set()).add(inputs[-1])
    for batch in [b for b in reads if "/Unity/unity_" in b]:
        members = [os.path.normpath(m) for m in unity_members(batch)]
        shared = reads.pop(batch) - set(members)
        for member in members:
            reads[member] = shared | {member}
    return reads


def pick(root, build, pattern, changed):
    """(picked sources, every source, whether the change reaches them all)."""
    build = os.path.abspath(build)
    sources = sorted({e["file"] for e in source_entries(build) if re.search(pattern, e["file"])})
    reads = inputs_by_source(build)
    everything = changed is None or reads is None or any(REACHES_ALL.match(p) for p in changed)
    if everything:
        return sources, sources, True
    touched = {os.path.join(root, p) for p in changed}
    return [s for s in sources if s not in reads or reads[s] & touched], sources, False


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("root")
    parser.add_argument("build")
    parser.add_argument("pattern")
    which = parser.add_mutually_exclusive_group()  # neither: every source
    parser.add_argument("--translation-units", action="store_true",
                        help="print a regex of the build's translation units holding the picked sources (a unity "
                             "batch for its members) instead of the sources")
    which.add_argument("--since")
    which.add_argument("--changed", nargs="*")
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    changed = changed_since(root, args.since) if args.since else args.changed if args.changed is not None else None
    picked, sources, everything = pick(root, args.build, args.pattern, changed)
    why = "every one: the change reaches them all" if everything else "those reading a changed file"
    since = f" since {args.since}" if args.since else ""
    print(f"clang-tidy: {len(picked)} of {len(sources)} sources, {why}{since}", file=sys.stderr)
    if args.translation_units:
        picked = translation_units(os.path.abspath(args.build), picked)
    print("^(" + "|".join(map(re.escape, picked)) + ")$" if picked else "")


if __name__ == "__main__":
    main()
