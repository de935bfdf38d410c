#!/usr/bin/env python3
"""Benchmark: mbridge-lint on a real Megatron Bridge checkout, as its users meet it.

Usage: bench/bridge_bench.py BRIDGE_CHECKOUT [--binary PATH] [--mcore REV] [--runs N] [--only whole,lsp,changed]

Prints one table: recipes resolved (all five recompute fields known), architectures known, the errors reported by
code (each one listed, to be read as a true finding or a false error), wall time and peak memory of checking the
whole recipe tree, and, when their scripts are present beside this one, the editor (LSP open, p50/p95 per edit on
the five largest recipe files) and pull-request figures (`--changed-only`, the pre-commit hook on a shared helper).
Exit status 0; the figures are for the reader and for the README.
"""
import argparse
import importlib.util
import json
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
RECIPE_DIRS = ["src/megatron/bridge/recipes", "src/megatron/bridge/perf_recipes"]
SUMMARY = re.compile(r"(\d+) recipes? evaluated; (\d+) resolves? all five recompute fields \([\d.]+%\)"
                     r"(?:; (\d+) have a known architecture)?")


def run_timed(cmd, cwd):
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    return proc.returncode, proc.stdout, proc.stderr, time.perf_counter() - start


def max_rss_mib(cmd, cwd):
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(proc.pid, 0)
    return usage.ru_maxrss / 1024.0


def whole_tree(binary, checkout, mcore, runs):
    dirs = [d for d in RECIPE_DIRS if os.path.isdir(os.path.join(checkout, d))]
    base = [binary, "check", *dirs, "--color", "never"] + (["--mcore", mcore] if mcore else [])
    rc, out, err, _ = run_timed(base, checkout)
    m = SUMMARY.search(out)
    recipes = int(m.group(1)) if m else 0
    resolved = int(m.group(2)) if m else 0
    arch = int(m.group(3)) if m and m.group(3) else None
    rc_json, out_json, _, _ = run_timed(base + ["--format", "json"], checkout)
    diagnostics = json.loads(out_json)["diagnostics"] if out_json.strip() else []
    errors = [d for d in diagnostics if d["severity"] == "error"]
    by_code = {}
    for d in diagnostics:
        by_code.setdefault((d["severity"], d["code"]), 0)
        by_code[(d["severity"], d["code"])] += 1
    walls, cpus = [], []
    for _ in range(runs):
        before = os.times()
        walls.append(run_timed(base + ["-q"], checkout)[3])
        after = os.times()
        cpus.append(after.children_user + after.children_system - before.children_user - before.children_system)
    rss = max_rss_mib(base + ["-q"], checkout)
    return {
        "exit": rc, "recipes": recipes, "resolved": resolved, "architecture_known": arch, "errors": errors,
        "by_code": by_code, "wall_best": min(walls), "wall_median": statistics.median(walls),
        "cpu_median": statistics.median(cpus), "rss_mib": rss,
        "revision_line": next((l for l in out.splitlines() if "Megatron Core" in l and "revision" in l), ""),
        "stderr": err.strip(),
    }


def load_sibling(name):
    path = os.path.join(HERE, name + ".py")
    if not os.path.exists(path):
        return None
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pct(a, b):
    return f"{100.0 * a / b:.1f} %" if b else "-"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", help="path of a Megatron Bridge checkout")
    parser.add_argument("--binary", default=os.path.join(HERE, "..", "build", "mbridge-lint"))
    parser.add_argument("--mcore", default="", help="--mcore for the whole-tree check (default: auto-detected)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--only", default="whole,lsp,changed")
    args = parser.parse_args(argv)
    binary = os.path.abspath(args.binary)
    checkout = os.path.abspath(args.checkout)
    parts = set(args.only.split(","))
    head = subprocess.run(["git", "-C", checkout, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    print(f"mbridge-lint on {checkout} (HEAD {head.stdout.strip() or 'unknown'}), {os.cpu_count()} cores")

    rows = []
    if "whole" in parts:
        w = whole_tree(binary, checkout, args.mcore, args.runs)
        rows.append(("check, whole recipe tree: exit code", str(w["exit"])))
        rows.append(("recipes resolved (five recompute fields known)",
                     f"{w['resolved']}/{w['recipes']} ({pct(w['resolved'], w['recipes'])})"))
        if w["architecture_known"] is not None:
            rows.append(("architecture known (layers, hidden size, heads)",
                         f"{w['architecture_known']}/{w['recipes']} ({pct(w['architecture_known'], w['recipes'])})"))
        for (severity, code), n in sorted(w["by_code"].items()):
            rows.append((f"  {severity} {code}", str(n)))
        rows.append(("whole tree: wall time best / median", f"{w['wall_best']:.2f} s / {w['wall_median']:.2f} s"))
        rows.append(("whole tree: CPU time (user + system), median", f"{w['cpu_median']:.2f} s"))
        rows.append(("whole tree: peak memory", f"{w['rss_mib']:.0f} MiB"))
        if w["revision_line"]:
            rows.append(("revision", w["revision_line"].strip()))
    width = max(len(r[0]) for r in rows) if rows else 0
    for name, value in rows:
        print(f"  {name:<{width}}  {value}")
    if "whole" in parts and w["errors"]:
        print("errors reported (each is a true finding or a false error):")
        for d in w["errors"]:
            print(f"  {d['file']}:{d['line']}: {d['code']} {d['message']}")
    mcore = args.mcore or None  # the sub-benches, like the whole-tree check, use the revision the checkout pins
    if "lsp" in parts and (lsp := load_sibling("bridge_lsp_bench")):
        print("\neditor: `mbridge-lint lsp --debounce-ms 0`, the largest recipe files")
        lsp.print_table(lsp.measure(checkout, binary, mcore=mcore))
    if "changed" in parts and (changed := load_sibling("bridge_changed_bench")):
        print("\npull requests: one file changed (the checkout is copied)")
        changed.print_table(changed.measure(checkout, binary, mcore=mcore))
    print(f"\nload average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (other work makes wall times longer)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
