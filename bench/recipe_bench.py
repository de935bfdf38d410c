#!/usr/bin/env python3
"""Benchmark: `mbridge-lint check` on a generated Megatron-Bridge-shaped tree (120 modules, 750 recipes).

Usage: bench/recipe_bench.py [path/to/mbridge-lint] [--runs N] [--families N] [--jobs N]
Prints the best and median wall time, CPU time and peak resident memory of the runs, and fails (exit 1) when the
best run misses the targets: under 2 s wall time and under 500 MB peak memory.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary", nargs="?", default=os.path.join(HERE, "..", "build", "mbridge-lint"))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--families", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=0, help="--jobs for mbridge-lint (default: one per core)")
    args = parser.parse_args()

    tree = tempfile.mkdtemp(prefix="mbridge-lint-recipes-")
    try:
        gen = subprocess.run([sys.executable, os.path.join(HERE, "gen_recipe_tree.py"), tree,
                              "--families", str(args.families)], check=True, capture_output=True, text=True)
        print(gen.stdout.strip())
        cmd = [os.path.abspath(args.binary), "check", "src", "--color", "never", "--mcore", "0.20.dev"]
        if args.jobs:
            cmd += ["--jobs", str(args.jobs)]
        summary = subprocess.run(cmd, cwd=tree, capture_output=True, text=True).stdout.strip().splitlines()[-2:]
        walls, cpus, rss = [], [], []
        for _ in range(args.runs):
            start = time.perf_counter()
            proc = subprocess.Popen(cmd + ["-q"], cwd=tree, stdout=subprocess.DEVNULL)
            _, _, usage = os.wait4(proc.pid, 0)
            walls.append(time.perf_counter() - start)
            cpus.append(usage.ru_utime + usage.ru_stime)
            rss.append(usage.ru_maxrss / 1024.0)  # KiB -> MiB
        print(f"mbridge-lint check on the generated tree ({args.runs} runs, {os.cpu_count()} cores):")
        print(f"  wall  best {min(walls):.3f} s, median {statistics.median(walls):.3f} s   (target < 2 s)")
        print(f"  cpu   median {statistics.median(cpus):.3f} s (user + sys; above wall time means cores in parallel)")
        print(f"  peak RSS {max(rss):.1f} MiB   (target < 500 MiB)")
        for line in summary:
            print(f"  {line}")
        return 0 if min(walls) < 2.0 and max(rss) < 500 else 1
    finally:
        shutil.rmtree(tree, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
