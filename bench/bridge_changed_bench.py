#!/usr/bin/env python3
"""Benchmark: what CI and pre-commit cost on a Megatron Bridge checkout when one file changes.

Usage: bench/bridge_changed_bench.py BRIDGE_CHECKOUT [--binary PATH] [--helper REL] [--recipe REL] [--mcore REV]

Copies the checkout to a temporary directory (`git clone --local`, or `cp -a` when cloning fails; files missing from
the checkout are committed as removed first, since git cannot commit a tree whose objects it lacks) and measures
  (a) CI on a pull request: one recipe file changed (by default the largest with a literal "selective" granularity,
      made "full"), then
      `mbridge-lint check --changed-only HEAD src/megatron/bridge`;
  (b) pre-commit: a commit that makes a shared helper module (no recipe of its own; by default the one that sets
      recompute_granularity and is imported by the most recipe files) set `recompute_granularity = "full"` with no method and
      no layer count. The real `pre-commit` tool runs the `mbridge-lint` hook of this repository's
      .pre-commit-hooks.yaml (a local hook repository, so it works offline); the hook's entry command alone is timed
      too, on the same staged files. For comparison, `--changed-only HEAD` on the same change.
Each line gives the wall time, the CPU time (the process and its children: less inflated than wall time by other work
on the machine), the exit code and the errors reported. The checkout itself is only read.
"""
import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bridge_lsp_bench import RECIPE_DEF, python_files  # noqa: E402  (the recipe files, found one way)
REPO = os.path.dirname(HERE)
DEFAULT_BINARY = os.path.join(REPO, "build", "mbridge-lint")
SELECTIVE = re.compile(r'recompute_granularity\s*=\s*"selective"')
SETS_GRANULARITY = re.compile(r"^\s*\S+\.recompute_granularity\s*=", re.M)
GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.org", "-c", "init.defaultBranch=main",
       "-c", "core.hooksPath=.git/hooks"]
TARGET_S = 2.0


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(cmd, cwd, env=None):
    """The finished process, its wall time, and the CPU time it and its children used (less inflated by other work
    on the machine than wall time)."""
    cpu, start = children_cpu(), time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    return proc, time.perf_counter() - start, children_cpu() - cpu


def copy_checkout(checkout, into):
    proc, _, _ = run(["git", "clone", "--quiet", "--local", "--no-hardlinks", checkout, into], cwd=os.getcwd())
    if proc.returncode == 0:
        return "git clone --local"
    shutil.rmtree(into, ignore_errors=True)
    shutil.copytree(checkout, into, symlinks=True)
    if os.path.isdir(os.path.join(into, ".git")):
        return "cp -a"
    # A source tree without git data (a git archive): the pull-request cases need a history to diff against.
    subprocess.run(GIT + ["init", "-q"], cwd=into, check=True)
    subprocess.run(GIT + ["add", "-A"], cwd=into, check=True)
    subprocess.run(GIT + ["commit", "-qm", "bench: the checkout as found", "--no-verify"], cwd=into, check=True)
    return "cp -a, git init"


def errors_in_json(stdout):
    try:
        return json.loads(stdout)["summary"]["errors"]
    except (ValueError, KeyError):
        return None


def edit_first(path, pattern, replacement):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    new, count = re.subn(pattern, replacement, text, count=1, flags=re.M)
    if count != 1:
        raise SystemExit(f"bench: no line matching {pattern!r} in {path}")
    with open(path, "w", encoding="utf-8") as f:
        f.write(new)


def hook_repo(into):
    """A git repository holding this repository's .pre-commit-hooks.yaml; returns its commit."""
    os.makedirs(into)
    shutil.copy(os.path.join(REPO, ".pre-commit-hooks.yaml"), into)
    subprocess.run(GIT + ["init", "-q"], cwd=into, check=True)
    subprocess.run(GIT + ["add", "-A"], cwd=into, check=True)
    subprocess.run(GIT + ["commit", "-qm", "hooks"], cwd=into, check=True)
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=into, check=True, capture_output=True, text=True).stdout.strip()


def hook_entry(hook_id="mbridge-lint-system"):
    """The entry command of a hook in .pre-commit-hooks.yaml (a plain `key: value` scan: no YAML library needed)."""
    current = None
    with open(os.path.join(REPO, ".pre-commit-hooks.yaml"), encoding="utf-8") as f:
        for line in f:
            m = re.match(r"\s*-?\s*(id|entry):\s*(.+?)\s*$", line)
            if not m:
                continue
            if m.group(1) == "id":
                current = m.group(2)
            elif current == hook_id:
                return m.group(2).split()
    raise SystemExit(f"bench: hook {hook_id} not found in .pre-commit-hooks.yaml")


def pick_files(checkout):
    """The files the cases change, chosen from the tree itself so that any Bridge checkout works: the recipe file is
    the largest one with a literal `recompute_granularity = "selective"`; the helper is the module without recipe
    functions that sets recompute_granularity and is imported by the most recipe files."""
    files = {os.path.relpath(p, checkout): t for p, t in python_files(checkout)}
    recipes = {p: t for p, t in files.items() if RECIPE_DEF.search(t)}
    recipe = max((p for p, t in recipes.items() if SELECTIVE.search(t)), key=lambda p: (recipes[p].count("\n"), p),
                 default=None)
    def importers(path):
        module = path[len("src/"):-len(".py")].replace("/", ".")
        pattern = re.compile(r"^\s*(from\s+" + re.escape(module) + r"\s+import|import\s+" + re.escape(module) + r"\b)",
                             re.M)
        return sum(1 for t in recipes.values() if pattern.search(t))
    helpers = [p for p, t in files.items() if p not in recipes and SETS_GRANULARITY.search(t)]
    helper = max(helpers, key=lambda p: (importers(p), p), default=None)
    return helper, recipe


def measure(checkout, binary=DEFAULT_BINARY, helper=None, recipe=None, mcore=None):
    """Figures: {"copy": how, "helper", "recipe", "rows": [{"case", "command", "seconds" (wall), "cpu" (seconds, with
    children), "exit", "errors"}]}. helper and recipe default to pick_files(); mcore to the revision the checkout
    pins."""
    binary = os.path.abspath(binary)
    picked_helper, picked_recipe = pick_files(os.path.abspath(checkout))
    helper, recipe = helper or picked_helper, recipe or picked_recipe
    if not helper or not recipe:
        raise SystemExit("bench: no shared helper setting recompute_granularity, or no recipe file with a literal "
                         "\"selective\"; pass --helper and --recipe")
    mcore_args = ["--mcore", mcore] if mcore else []
    work = tempfile.mkdtemp(prefix="mbridge-lint-changed-")
    env = dict(os.environ, HOME=os.path.join(work, "home"), PRE_COMMIT_HOME=os.path.join(work, "pre-commit-cache"),
               PATH=os.path.dirname(binary) + os.pathsep + os.environ.get("PATH", "/usr/bin:/bin"))
    rows = []
    try:
        tree = os.path.join(work, "bridge")
        how = copy_checkout(os.path.abspath(checkout), tree)
        # Files absent from the checkout (its git objects may lack them too) would stop every commit: drop them first.
        missing = subprocess.run(["git", "ls-files", "--deleted", "-z"], cwd=tree, check=True,
                                 capture_output=True, text=True).stdout.split("\0")
        missing = [m for m in missing if m]
        if missing:
            subprocess.run(GIT + ["rm", "--cached", "-q", "--"] + missing, cwd=tree, check=True)
            subprocess.run(GIT + ["commit", "-qm", "bench: drop files missing from the checkout", "--no-verify"],
                           cwd=tree, check=True)
        lint = [binary, "check"] + mcore_args

        # (a) one recipe changed, not committed: what a pull request's CI job lints.
        edit_first(os.path.join(tree, recipe), r'(recompute_granularity\s*=\s*)"selective"', r'\1"full"')
        proc, seconds, cpu = run(lint + ["--format", "json", "--changed-only", "HEAD", "src/megatron/bridge"], tree, env)
        rows.append({"case": "(a) one recipe changed", "command": "check --changed-only HEAD src/megatron/bridge",
                     "seconds": seconds, "cpu": cpu, "exit": proc.returncode, "errors": errors_in_json(proc.stdout)})
        subprocess.run(["git", "checkout", "-q", "--", recipe], cwd=tree, check=True)

        # (b) the shared helper turns on full recompute without a method, and is committed through pre-commit.
        rev = hook_repo(os.path.join(work, "hooks"))
        with open(os.path.join(tree, ".pre-commit-config.yaml"), "w", encoding="utf-8") as f:
            f.write(f"repos:\n  - repo: {os.path.join(work, 'hooks')}\n    rev: {rev}\n    hooks:\n"
                    f"      - id: mbridge-lint-system\n" + (f"        args: [--mcore, \"{mcore}\"]\n" if mcore else ""))
        subprocess.run(GIT + ["add", ".pre-commit-config.yaml"], cwd=tree, check=True)
        subprocess.run(GIT + ["commit", "-qm", "pre-commit config", "--no-verify"], cwd=tree, check=True)
        proc, _, _ = run(["pre-commit", "install"], tree, env)
        if proc.returncode != 0:
            raise SystemExit("bench: pre-commit install failed: " + proc.stderr)
        edit_first(os.path.join(tree, helper), r"(recompute_granularity\s*=\s*)\S.*$", r'\1"full"')
        subprocess.run(GIT + ["add", helper], cwd=tree, check=True)
        # The hook's environment is installed on first use (a clone of the hook repository): not part of a commit.
        run(["pre-commit", "install-hooks"], tree, env)

        proc, seconds, cpu = run(GIT + ["commit", "-m", "helper: full recompute"], tree, env)
        out = proc.stdout + proc.stderr
        verdict = "Failed" if "Failed" in out else "Passed" if "Passed" in out else "?"
        rows.append({"case": "(b) helper commit, pre-commit hook", "command": f"git commit (hook {verdict})",
                     "seconds": seconds, "cpu": cpu, "exit": proc.returncode, "errors": len(re.findall(r": error\[", out)),
                     "note": next((l for l in out.splitlines() if "is imported by" in l), "")})
        entry = hook_entry()
        proc, seconds, cpu = run([binary] + entry[1:] + mcore_args + ["--format", "json", helper], tree, env)
        rows.append({"case": "(b) helper commit, hook entry alone", "command": " ".join(entry) + " " + helper,
                     "seconds": seconds, "cpu": cpu, "exit": proc.returncode, "errors": errors_in_json(proc.stdout)})
        proc, seconds, cpu = run(lint + ["--format", "json", "--changed-only", "HEAD", "src/megatron/bridge"], tree, env)
        rows.append({"case": "(b) helper change, CI", "command": "check --changed-only HEAD src/megatron/bridge",
                     "seconds": seconds, "cpu": cpu, "exit": proc.returncode, "errors": errors_in_json(proc.stdout)})
        return {"copy": how, "helper": helper, "recipe": recipe, "rows": rows}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def print_table(figures, out=sys.stdout):
    """Prints the figures of measure() as a table; returns whether the targets are met."""
    print(f"recipe file changed: {figures['recipe']}; shared helper changed: {figures['helper']}", file=out)
    print(f"{'case':<38} {'seconds':>8} {'cpu s':>6} {'exit':>5} {'errors':>7}  command", file=out)
    for r in figures["rows"]:
        errors = "-" if r["errors"] is None else r["errors"]
        print(f"{r['case']:<38} {r['seconds']:>8.2f} {r['cpu']:>6.2f} {r['exit']:>5} {errors:>7}  {r['command']}",
              file=out)
        if r.get("note"):
            print(f"{'':<38} {r['note']}", file=out)
    hook = next(r for r in figures["rows"] if "pre-commit hook" in r["case"])
    ok = all(r["seconds"] <= TARGET_S for r in figures["rows"]) and hook["exit"] != 0 and hook["errors"] > 0
    print(f"targets: every case <= {TARGET_S:.0f} s, the hook fails on the helper's errors: {'met' if ok else 'MISSED'}",
          file=out)
    return ok


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", help="a Megatron Bridge checkout (only read; it is copied)")
    parser.add_argument("--binary", default=DEFAULT_BINARY, help="the mbridge-lint to run (default: build/mbridge-lint)")
    parser.add_argument("--helper", default=None, help="the shared helper module to change (default: picked, see pick_files)")
    parser.add_argument("--recipe", default=None, help="the recipe file to change (default: picked, see pick_files)")
    parser.add_argument("--mcore", default=None, help="--mcore for every command (default: the revision the checkout pins)")
    args = parser.parse_args(argv)
    figures = measure(args.checkout, args.binary, args.helper, args.recipe, args.mcore)
    print(f"changed files on {args.checkout} (copied with {figures['copy']}; {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.1f})")
    return 0 if print_table(figures) else 1


if __name__ == "__main__":
    sys.exit(main())
