#!/usr/bin/env python3
"""Generates schemas/mcore/commits.json: where a Megatron-LM commit lies among the revisions the linter has facts for.

A development tool (Python standard library only); the linter reads what it writes and never runs it.

A job pins Megatron Core by commit (a gitlink, `.main.commit`, `--mcore HASH`), and the linter has facts (fields and
compiled checks, schemas/mcore/) for a few commits only. This table lists the commits a job is likely to pin --
every commit on the first-parent line of `main` and `dev` since the 0.12 release, every `core_v*` tag, and every
commit a Megatron Bridge branch or tag ever pinned (its 3rdparty/Megatron-LM gitlink, `.main.commit`, `.dev.commit`)
-- and for each the revision with facts nearest before it and nearest after it:

  nearest  the revision fewest commits away (those one has and the other lacks)
  other    the nearest revision on the commit's other side: one that has the commit when `nearest` lacks it, or the
           reverse; none when every revision is on the same side

The linter checks a commit it has no facts for with `nearest`'s facts; a Megatron Core check that `other`'s source
does not state too may not be in the commit's, so it is a warning there (rules/megatron_raises.cpp).

Usage: scripts/mcore_commits.py [--megatron GIT_DIR] [--bridge GIT_DIR] [--check]
"""

import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCHEMAS = os.path.join(ROOT, "schemas", "mcore")
OUT = os.path.join(SCHEMAS, "commits.json")
HASH_CHARS = 12  # enough to be unique in Megatron-LM; a pin is matched by prefix


def git(git_dir, *args):
    return subprocess.run(["git", "--git-dir", git_dir, *args], capture_output=True, text=True,
                          check=True).stdout


def revision_commits():
    index = json.load(open(os.path.join(SCHEMAS, "index.json")))
    out = {}
    for name in index["order"]:
        rev = json.load(open(os.path.join(SCHEMAS, f"{name}.json")))
        out[name] = rev["commit"] if "commit" in rev else rev["tags"][rev["release"]]
    return out


def first_parent(git_dir, ref, since):
    """(hash, date) of the first-parent line of `ref` since `since`, oldest first."""
    lines = git(git_dir, "log", "--first-parent", f"--since={since}", "--format=%H %cs", ref).split("\n")
    return [tuple(line.split()) for line in reversed(lines) if line]


def bridge_pins(bridge_dir):
    """Every Megatron-LM commit a Megatron Bridge branch or tag pinned, as a gitlink or in .main/.dev.commit."""
    pins = set()
    for commit in git(bridge_dir, "log", "--all", "--format=%H", "--", "3rdparty/Megatron-LM").split():
        entry = git(bridge_dir, "ls-tree", commit, "3rdparty/Megatron-LM").split()
        if len(entry) >= 3 and entry[1] == "commit":
            pins.add(entry[2])
    for name in (".main.commit", ".dev.commit"):
        for line in git(bridge_dir, "log", "--all", "-p", "--format=", "--", name).split("\n"):
            text = line[1:].strip()
            if line.startswith("+") and not line.startswith("+++") and len(text) == 40:
                pins.add(text.lower())
    return pins


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--megatron", default="/work/.mirror/NVIDIA+Megatron-LM/repo")
    parser.add_argument("--bridge", default="/work/.mirror/NVIDIA-NeMo+Megatron-Bridge/repo")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when the file is out of date")
    args = parser.parse_args()
    mg = args.megatron
    revisions = revision_commits()
    since = git(mg, "log", "-1", "--format=%cs", "core_v0.12.0").strip()

    entries = {}  # hash -> [date, where]
    lines = {}
    for branch in ("main", "dev"):  # the lines, the first-parent history of each
        lines[branch] = first_parent(mg, branch, since)
        for h, d in lines[branch]:
            entries.setdefault(h, [d, branch])
    for line in git(mg, "for-each-ref", "--format=%(objectname) %(*objectname) %(refname:short)",
                    "refs/tags/core_v*").split("\n"):
        parts = line.split()
        if len(parts) == 3:
            h, name = parts[1] if parts[1] else parts[0], parts[2]
        elif len(parts) == 2:
            h, name = parts
        else:
            continue
        d = git(mg, "log", "-1", "--format=%cs", h).strip()
        entries.setdefault(h, [d, name])
    for h in bridge_pins(args.bridge):
        try:
            d = git(mg, "log", "-1", "--format=%cs", h).strip()
        except subprocess.CalledProcessError:
            continue  # a pin the mirror lacks (a fork's private commit): nothing known about it
        entries.setdefault(h, [d, "pinned by Megatron Bridge"])

    # How far a commit is from each revision: the commits one has and the other lacks. For a commit on a line (main,
    # dev: squash merges, so one commit a change) that is the distance along the line to where the revision left it,
    # plus the revision's own commits off the line; for any other commit git counts it.
    ancestors = {name: set(git(mg, "rev-list", commit).split()) for name, commit in revisions.items()}
    full = {branch: git(mg, "rev-list", "--first-parent", "--reverse", branch).split() for branch in lines}
    index = {branch: {h: i for i, h in enumerate(hashes)} for branch, hashes in full.items()}
    fork_index, off_line = {}, {}
    for name, commit in revisions.items():
        for branch in lines:
            fork_index[name, branch] = index[branch].get(git(mg, "merge-base", commit, branch).strip())
            off_line[name, branch] = int(git(mg, "rev-list", "--count", f"{branch}..{commit}"))

    def distance(name, h, where):
        if where in lines and fork_index[name, where] is not None:
            return off_line[name, where] + abs(index[where][h] - fork_index[name, where])
        left, right = git(mg, "rev-list", "--count", "--left-right", f"{h}...{revisions[name]}").split()
        return int(left) + int(right)

    table = []
    for h, (d, where) in sorted(entries.items(), key=lambda e: (e[1][0], e[0])):
        near = sorted((distance(name, h, where), name) for name in revisions)
        nearest = near[0][1]
        # The check of the nearest revision's facts: the nearest revision on the commit's other side (one that has
        # it when the nearest lacks it, and the reverse); none where every revision is on the same side.
        side = h in ancestors[nearest]
        other = next((name for _, name in near[1:] if (h in ancestors[name]) != side), None)
        if near[0][0] == 0:
            other = nearest
        table.append([h[:HASH_CHARS], d, where, nearest, other])

    newest = max(d for d, _ in entries.values())
    out = {
        "generated_by": "scripts/mcore_commits.py from Megatron-LM's and Megatron Bridge's git history; do not edit",
        "what": "Megatron-LM commits a job may pin (first-parent main and dev since core_v0.12.0, core_v* tags, every "
                "commit a Megatron Bridge ref pinned) with the nearest revision of schemas/mcore and the nearest on the commit's other side (it has the commit "
                "where the nearest lacks it, or the reverse): [hash prefix, commit date, branch or tag, nearest, other]",
        "newest": newest,
        "revisions": revisions,
        "commits": table,
    }
    text = "{\n" + ",\n".join(
        f"  {json.dumps(k)}: " + (json.dumps(v) if k != "commits" else
                                  "[\n" + ",\n".join("    " + json.dumps(row) for row in v) + "\n  ]")
        for k, v in out.items()) + "\n}\n"
    old = open(OUT).read() if os.path.exists(OUT) else None
    if args.check:
        if old != text:
            print(f"out of date: {os.path.relpath(OUT, ROOT)}", file=sys.stderr)
            return 1
        return 0
    with open(OUT, "w") as f:
        f.write(text)
    print(f"{len(table)} commits to {newest}; {sum(1 for r in table if r[4] is None)} with no revision on the other side")
    return 0


if __name__ == "__main__":
    sys.exit(main())
