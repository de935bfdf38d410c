#!/usr/bin/env python3
"""Generates schemas/mcore/commits.json: where a Megatron-LM commit lies among the revisions the linter has facts for.

A development tool (Python standard library only); the linter reads what it writes and never runs it.

A job pins Megatron Core by commit (a gitlink, `.main.commit`, `--mcore HASH`), and the linter has facts (fields and
compiled checks) for the named revisions of schemas/mcore/index.json and the commits of the fact store
(schemas/mcore/facts/, chosen by fact_commits below and written by scripts/mcore_facts.py --store). This table lists
the commits a job is likely to pin -- every commit on the first-parent line of `main` and `dev` since the 0.12
release, every `core_v*` tag, and every commit a Megatron Bridge branch or tag ever pinned (its 3rdparty/Megatron-LM
gitlink, `.main.commit`, `.dev.commit`) -- and for each the commit with facts nearest to it, by name:

  nearest  the one fewest commits away (the commits one has and the other lacks, counted exactly on the graph)
  other    the nearest on the commit's other side: one that has the commit when `nearest` lacks it, or the reverse;
           none when every one is on the same side

The linter checks a commit with facts of its own by them; any other with `nearest`'s facts, and a Megatron Core check
that `other`'s source does not state too may not be in the commit's, so it is a warning there
(rules/megatron_raises.cpp).

Usage: scripts/mcore_commits.py [--megatron GIT_DIR] [--bridge GIT_DIR] [--check]
"""

import argparse
import json
import os
import subprocess
import sys

import mcore_store

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCHEMAS = os.path.join(ROOT, "schemas", "mcore")
OUT = os.path.join(SCHEMAS, "commits.json")
HASH_CHARS = 12  # enough to be unique in Megatron-LM; a pin is matched by prefix


def git(git_dir, *args):
    return subprocess.run(["git", "--git-dir", git_dir, *args], capture_output=True, text=True,
                          check=True).stdout


def revision_commits():
    """The named revisions of schemas/mcore/index.json: name -> commit."""
    index = json.load(open(os.path.join(SCHEMAS, "index.json")))
    out = {}
    for name in index["order"]:
        rev = json.load(open(os.path.join(SCHEMAS, f"{name}.json")))
        out[name] = rev["commit"] if "commit" in rev else rev["tags"][rev["release"]]
    return out


def stored_commits():
    """The commits of the fact store (schemas/mcore/facts/index.jsonl): name -> commit."""
    _, rows = mcore_store.read(os.path.join(SCHEMAS, "facts"))
    return {row[4]: row[0] for row in rows}


def first_parent(git_dir, ref, since):
    """(hash, date) of the first-parent line of `ref` since `since`, oldest first."""
    lines = git(git_dir, "log", "--first-parent", f"--since={since}", "--format=%H %cs", ref).split("\n")
    return [tuple(line.split()) for line in reversed(lines) if line]


def pins_at(bridge_dir, commit):
    """The Megatron-LM commits one Megatron Bridge commit pins: its 3rdparty/Megatron-LM gitlink, .main.commit and
    .dev.commit."""
    pins = set()
    entry = git(bridge_dir, "ls-tree", commit, "3rdparty/Megatron-LM").split()
    if len(entry) >= 3 and entry[1] == "commit":
        pins.add(entry[2])
    for name in (".main.commit", ".dev.commit"):
        r = subprocess.run(["git", "--git-dir", bridge_dir, "show", f"{commit}:{name}"], capture_output=True,
                           text=True)
        text = r.stdout.strip().lower()
        if r.returncode == 0 and len(text) == 40:
            pins.add(text)
    return pins


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


def core_tags(git_dir):
    """core_v* tag -> its commit."""
    out = {}
    for line in git(git_dir, "for-each-ref", "--format=%(objectname) %(*objectname) %(refname:short)",
                    "refs/tags/core_v*").split("\n"):
        parts = line.split()
        if len(parts) == 3:
            out[parts[2]] = parts[1]
        elif len(parts) == 2:
            out[parts[1]] = parts[0]
    return out


def has_commit(git_dir, h):
    return subprocess.run(["git", "--git-dir", git_dir, "cat-file", "-e", h + "^{commit}"],
                          capture_output=True).returncode == 0


def fact_commits(mg, bridge):
    """The commits the fact store holds, by rule (hash -> where): every core_v* tag (patch releases and release
    candidates too); every Megatron-LM commit the head of a Megatron Bridge branch or tag pins (gitlink,
    .main.commit, .dev.commit); the first commit of each month on the first-parent lines of main and dev since
    core_v0.12.0. `where` is the tag, else the line, else "pinned by Megatron Bridge"."""
    since = git(mg, "log", "-1", "--format=%cs", "core_v0.12.0").strip()
    out = {}
    for tag, h in sorted(core_tags(mg).items()):
        out.setdefault(h, tag)
    for branch in ("main", "dev"):
        months = {}
        for h, d in first_parent(mg, branch, since):
            months.setdefault(d[:7], h)
        for h in months.values():
            out.setdefault(h, branch)
    heads = git(bridge, "for-each-ref", "--format=%(objectname)", "refs/heads", "refs/tags").split()
    for commit in sorted(set(heads)):
        for h in sorted(pins_at(bridge, commit)):
            if h not in out and has_commit(mg, h):
                out[h] = "pinned by Megatron Bridge"
    return out


class Ancestry:
    """The commit graph of Megatron-LM below the given tips: each commit's ancestors as a bit set, so that the
    distance between two commits (the commits one has and the other lacks) and whether one has the other are exact
    and cheap."""

    def __init__(self, git_dir, tips):
        text = subprocess.run(["git", "--git-dir", git_dir, "rev-list", "--parents", "--topo-order", "--reverse",
                               "--stdin"], input="\n".join(sorted(set(tips))) + "\n", capture_output=True, text=True,
                              check=True).stdout
        self.bit, self.below = {}, {}
        for line in text.split("\n"):
            if not line:
                continue
            h, *parents = line.split()
            self.bit[h] = len(self.bit)
            mask = 1 << self.bit[h]
            for p in parents:
                mask |= self.below[p]
            self.below[h] = mask

    def distance(self, a, b):
        return (self.below[a] ^ self.below[b]).bit_count()

    def has(self, descendant, ancestor):
        return (self.below[descendant] >> self.bit[ancestor]) & 1 == 1


def nearest(ancestry, h, revisions):
    """(nearest, other) for commit h among revisions (name -> commit): the revision fewest commits away, and the
    nearest on h's other side (one that has h where the nearest lacks it, or the reverse; None where none is)."""
    near = sorted((ancestry.distance(h, commit), name) for name, commit in revisions.items())
    first = near[0][1]
    if near[0][0] == 0:
        return first, first
    side = ancestry.has(revisions[first], h)
    other = next((name for _, name in near[1:] if ancestry.has(revisions[name], h) != side), None)
    return first, other


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--megatron", default="/work/.mirror/NVIDIA+Megatron-LM/repo")
    parser.add_argument("--bridge", default="/work/.mirror/NVIDIA-NeMo+Megatron-Bridge/repo")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when the file is out of date")
    args = parser.parse_args()
    mg = args.megatron
    named = revision_commits()
    revisions = dict(named)
    for name, commit in stored_commits().items():
        if commit not in named.values():
            revisions[name] = commit
    since = git(mg, "log", "-1", "--format=%cs", "core_v0.12.0").strip()

    entries = {}  # hash -> [date, where]
    for branch in ("main", "dev"):  # the lines, the first-parent history of each
        for h, d in first_parent(mg, branch, since):
            entries.setdefault(h, [d, branch])
    for name, h in core_tags(mg).items():
        entries.setdefault(h, [git(mg, "log", "-1", "--format=%cs", h).strip(), name])
    for h in bridge_pins(args.bridge):
        if h not in entries and has_commit(mg, h):  # a pin the mirror lacks (a fork's private commit) is unknown
            entries[h] = [git(mg, "log", "-1", "--format=%cs", h).strip(), "pinned by Megatron Bridge"]

    ancestry = Ancestry(mg, list(entries) + list(revisions.values()))
    table = []
    for h, (d, where) in sorted(entries.items(), key=lambda e: (e[1][0], e[0])):
        table.append([h[:HASH_CHARS], d, where, *nearest(ancestry, h, revisions)])

    newest = max(d for d, _ in entries.values())
    out = {
        "generated_by": "scripts/mcore_commits.py from Megatron-LM's and Megatron Bridge's git history; do not edit",
        "what": "Megatron-LM commits a job may pin (first-parent main and dev since core_v0.12.0, core_v* tags, every "
                "commit a Megatron Bridge ref pinned) with the nearest commit having facts (a revision of "
                "schemas/mcore/index.json or a commit of the fact store schemas/mcore/facts/, by its name) and the "
                "nearest on the commit's other side (it has the commit where the nearest lacks it, or the reverse): "
                "[hash prefix, commit date, branch or tag, nearest, other]",
        "newest": newest,
        "revisions": named,
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
    exact = sum(1 for r in table if r[3] == r[4] and revisions.get(r[3], "").startswith(r[0]))
    print(f"{len(table)} commits to {newest}; {exact} with facts of their own; "
          f"{sum(1 for r in table if r[4] is None)} with no revision on the other side")
    return 0


if __name__ == "__main__":
    sys.exit(main())
