#!/usr/bin/env python3
"""Runs the command-and-output examples of README.md and docs/*.md and compares what they print.

Usage: scripts/doc_examples.py [--binary PATH] [--update] [--bridge DIR] [FILE.md ...]

An example is a fenced code block whose first line starts with `$ mbridge-lint` (or `$ cd DIR`, then
`$ mbridge-lint`): the command (a line ending in `\\` continues on the next), then the output it prints. The command
runs from the repository root (or DIR under it), with `mbridge-lint` meaning --binary, standard output and error
together. Output lines are compared with trailing spaces removed; a line `...` stands for any number of lines; the
repository's absolute path is written `/path/to/mbridge-lint` (on such a line, runs of spaces compare as two: the
padding after the path depends on where the repository is checked out). A block that has no output lines is not an example
(the rule docs' Example lines are run by the rule tests).

An example that needs what the repository does not hold (the Megatron Bridge tree) is an illustration: the line right
after its block starts with `*Illustration`, and it is listed, not run. With --bridge DIR (a Megatron Bridge
checkout), an illustration marked `*Illustration, not run by the doc test: Megatron Bridge at SHA.*` (or `at HEAD
SHA`) whose directory starts with `Megatron-Bridge` runs in DIR like an example, when DIR's HEAD is that commit;
the --fix illustrations edit DIR, so give it a scratch checkout. DIR's path is written `/path/to/Megatron-Bridge`.

Exit 0 when every example prints what its block shows; 1 otherwise, with the differences. With --update, each
block that differs is rewritten with what the command printed (keeping a block's first and last lines around `...`
the same in number), which is how an intended change of output is taken into the docs.
"""
import argparse
import difflib
import glob
import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
ROOT_PLACEHOLDER = "/path/to/mbridge-lint"
BRIDGE_PLACEHOLDER = "/path/to/Megatron-Bridge"  # where --bridge's checkout is named in an illustration's output
FENCE = re.compile(r"^(```+|~~~+)")
ELLIPSIS = "..."


# An illustration that --bridge can run: the Bridge commit it shows.
BRIDGE_ILLUSTRATION = re.compile(
    r"^\*Illustration, not run by the doc test: Megatron Bridge (?:at )?(?:HEAD )?([0-9a-f]{7,40})[.;]")


class Example:
    def __init__(self, path, start, end, cwd, command, expected, illustration, bridge_commit=None):
        self.path = path  # the markdown file
        self.start, self.end = start, end  # 0-based line numbers of the block's content (end exclusive)
        self.cwd = cwd
        self.command = command  # the argument string after `mbridge-lint`
        self.expected = expected  # output lines
        self.illustration = illustration
        self.bridge_commit = bridge_commit  # the Bridge commit an illustration was made at, when its line says

    def where(self):
        return f"{os.path.relpath(self.path, ROOT)}:{self.start}"


def parse_block(lines):
    """(cwd, command, output lines) of a block's content, or None when it is not an example."""
    cwd, i = ".", 0
    if i < len(lines) and lines[i].startswith("$ cd "):
        cwd = lines[i][len("$ cd "):].strip()
        i += 1
    if i >= len(lines) or not lines[i].startswith("$ mbridge-lint"):
        return None
    command = lines[i][len("$ mbridge-lint"):]
    while command.endswith("\\") and i + 1 < len(lines):
        i += 1
        command = command[:-1] + " " + lines[i].strip()
    output = lines[i + 1:]
    if not output:
        return None
    return cwd, command.strip(), output


def examples_in(path):
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    found, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, start = m.group(1), i + 1
        end = start
        while end < len(lines) and not lines[end].startswith(fence):
            end += 1
        parsed = parse_block(lines[start:end])
        if parsed:
            after = lines[end + 1] if end + 1 < len(lines) else ""
            bridge = BRIDGE_ILLUSTRATION.match(after)
            found.append(Example(path, start, end, *parsed, illustration=after.startswith("*Illustration"),
                                 bridge_commit=bridge.group(1) if bridge else None))
        i = end + 1
    return found


def run(example, binary, bridge=None):
    """`bridge`: the checkout a runnable Bridge illustration's Megatron-Bridge/... directory stands for."""
    cwd = os.path.normpath(os.path.join(ROOT, example.cwd))
    if bridge:
        cwd = os.path.normpath(os.path.join(bridge, os.path.relpath(example.cwd, "Megatron-Bridge")))
    if not os.path.isdir(cwd):
        return [f"(the example's directory {example.cwd} is not in the repository)"]
    command = shlex.quote(binary) + " " + example.command
    proc = subprocess.run(["bash", "-c", command], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          stdin=subprocess.DEVNULL, env=dict(os.environ, NO_COLOR="1"))
    text = proc.stdout.decode("utf-8", errors="replace").replace(ROOT, ROOT_PLACEHOLDER)
    if bridge:
        text = text.replace(os.path.abspath(bridge), BRIDGE_PLACEHOLDER)
    lines = [line.rstrip() for line in text.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def comparable(line):
    """A line as compared: where it names the repository, the padding that aligns a column after the path depends on
    the checkout's path length, so runs of two or more spaces there count as two."""
    line = line.rstrip()
    return re.sub(r" {2,}", "  ", line) if ROOT_PLACEHOLDER in line else line


def matches(expected, actual):
    """Whether `actual` fits `expected`, where a line `...` stands for any number of lines."""
    expected = [comparable(line) for line in expected]
    actual = [comparable(line) for line in actual]
    memo = {}

    def fit(i, j):
        if (i, j) in memo:
            return memo[(i, j)]
        if i == len(expected):
            ok = j == len(actual)
        elif expected[i] == ELLIPSIS:
            ok = any(fit(i + 1, k) for k in range(j, len(actual) + 1))
        else:
            ok = j < len(actual) and expected[i] == actual[j] and fit(i + 1, j + 1)
        memo[(i, j)] = ok
        return ok

    return fit(0, 0)


def refreshed(expected, actual):
    """The block's new output: the actual lines, elided as the old block was (its first and last lines around `...`
    kept the same in number)."""
    if ELLIPSIS not in expected:
        return actual
    head = expected.index(ELLIPSIS)
    tail = len(expected) - 1 - max(i for i, line in enumerate(expected) if line == ELLIPSIS)
    if head + tail >= len(actual):
        return actual
    return actual[:head] + [ELLIPSIS] + (actual[len(actual) - tail:] if tail else [])


def update_file(path, changes):
    """Rewrites the output lines of the given examples (a list of (example, new output lines)) in one file."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for example, output in sorted(changes, key=lambda c: -c[0].start):
        first_output = example.end - len(example.expected)
        lines[first_output:example.end] = output
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default=os.path.join(ROOT, "build", "mbridge-lint"))
    parser.add_argument("--update", action="store_true", help="rewrite the blocks whose output changed")
    parser.add_argument("--bridge", metavar="DIR",
                        help="a Megatron Bridge checkout (a scratch copy: the --fix illustrations edit it): also "
                             "run the illustrations made at its HEAD commit")
    parser.add_argument("files", nargs="*", help="markdown files (default: README.md and docs/*.md)")
    args = parser.parse_args(argv)
    binary = os.path.abspath(args.binary)
    bridge_head = None
    if args.bridge:
        bridge_head = subprocess.run(["git", "-C", args.bridge, "rev-parse", "HEAD"], stdout=subprocess.PIPE,
                                     text=True, check=True).stdout.strip()
    files = args.files or [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
    failed, ran, illustrations, changes = 0, 0, [], {}
    for path in files:
        for example in examples_in(path):
            runnable = (bridge_head and example.bridge_commit and bridge_head.startswith(example.bridge_commit)
                        and example.cwd.split("/")[0] == "Megatron-Bridge")
            if example.illustration and not runnable:
                illustrations.append(example)
                continue
            ran += 1
            actual = run(example, binary, args.bridge if runnable else None)
            if matches(example.expected, actual):
                continue
            if args.update:
                changes.setdefault(path, []).append((example, refreshed(example.expected, actual)))
                print(f"{example.where()}: updated: mbridge-lint {example.command}")
                continue
            failed += 1
            print(f"{example.where()}: mbridge-lint {example.command} prints something else than the docs show:")
            sys.stdout.writelines(line + "\n" for line in difflib.unified_diff(
                example.expected, actual, "documented", "printed", lineterm=""))
    for path, file_changes in changes.items():
        update_file(path, file_changes)
    for example in illustrations:
        print(f"{example.where()}: illustration, not run: mbridge-lint {example.command}")
    print(f"{ran - failed} passed, {failed} failed")
    if failed:
        print("an intended change of output: scripts/update-doc-examples.sh, then review the diff")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
