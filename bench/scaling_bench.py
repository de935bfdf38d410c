#!/usr/bin/env python3
"""Benchmark: how `check` scales with threads, and the run at a repository root.

Usage: bench/scaling_bench.py BRIDGE_CHECKOUT [--binary PATH] [--jobs 1,2] [--runs N] [--callgrind] [--only tree,root]

tree: `check src/megatron/bridge/recipes src/megatron/bridge/perf_recipes` with each `-j` of --jobs, runs interleaved
(-j1, -j2, -j1, ...) so that a change in the machine's load hits every setting alike; wall time best and median, CPU
time (user + system) median, cores busy (CPU time over wall time, median of the runs: what a thread waiting for another
costs, and far steadier than wall time when the machine's speed changes), peak memory, and the speed-up of each -j
over the first.
root: `check .` at the checkout's root: the same figures.
--callgrind: also the instructions one run executes (valgrind --tool=callgrind), which other work on the machine does
not change: a gain in instructions is real work saved, a gain in wall time alone may be the machine getting quieter.

Exit status 0; the figures are for the reader and the docs. The load average is printed before and after: wall times
are only comparable on a machine that is otherwise quiet.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
RECIPE_DIRS = ["src/megatron/bridge/recipes", "src/megatron/bridge/perf_recipes"]


def timed(cmd, cwd):
    """Wall seconds, CPU seconds (user + system) and peak RSS (MiB) of one run of `cmd`."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0


def instructions(cmd, cwd):
    """Instructions executed by one run, all threads together, as callgrind counts them."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *cmd], cwd=cwd,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        total = 0
        for name in os.listdir(tmp):
            with open(os.path.join(tmp, name)) as f:
                for line in f:
                    m = re.match(r"(?:summary|totals): (\d+)", line)
                    if m:
                        total = max(total, int(m.group(1)))
        return total


def measure(settings, cwd, runs, callgrind):
    """settings: (label, command) pairs, run interleaved `runs` times."""
    samples = {label: [] for label, _ in settings}
    for _ in range(runs):
        for label, cmd in settings:
            samples[label].append(timed(cmd, cwd))
    out = []
    for label, cmd in settings:
        walls, cpus, rss = zip(*samples[label])
        row = {"label": label, "wall_best": min(walls), "wall_median": statistics.median(walls),
               "cpu_median": statistics.median(cpus), "rss_mib": max(rss),
               "busy_median": statistics.median(c / w for w, c in zip(walls, cpus))}
        if callgrind:
            row["instructions"] = instructions(cmd, cwd)
        out.append(row)
    return out


def print_rows(title, rows):
    print(title)
    base = rows[0]
    for r in rows:
        line = (f"  {r['label']:<6} wall best {r['wall_best']:.2f} s, median {r['wall_median']:.2f} s; "
                f"CPU {r['cpu_median']:.2f} s, {r['busy_median']:.2f} cores busy; peak {r['rss_mib']:.0f} MiB")
        if r is not base:
            line += f"; speed-up {base['wall_median'] / r['wall_median']:.2f}x (median), " \
                    f"{base['wall_best'] / r['wall_best']:.2f}x (best)"
        if "instructions" in r:
            line += f"; {r['instructions'] / 1e9:.2f} G instructions"
        print(line)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", help="path of a Megatron Bridge checkout")
    parser.add_argument("--binary", default=os.path.join(HERE, "..", "build", "mbridge-lint"))
    parser.add_argument("--jobs", default="1,2", help="the -j values to compare, the first is the base")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--callgrind", action="store_true")
    parser.add_argument("--only", default="tree,root")
    args = parser.parse_args(argv)
    binary = os.path.abspath(args.binary)
    checkout = os.path.abspath(args.checkout)
    parts = set(args.only.split(","))
    print(f"mbridge-lint {binary} on {checkout}, {os.cpu_count()} cores, "
          f"load average before {os.getloadavg()[0]:.2f}")
    if "tree" in parts:
        dirs = [d for d in RECIPE_DIRS if os.path.isdir(os.path.join(checkout, d))]
        settings = [(f"-j {j}", [binary, "check", *dirs, "-q", "-j", j]) for j in args.jobs.split(",")]
        print_rows("whole recipe tree: check " + " ".join(dirs),
                   measure(settings, checkout, args.runs, args.callgrind))
    if "root" in parts:
        settings = [(f"-j {j}", [binary, "check", ".", "-q", "-j", j]) for j in args.jobs.split(",")]
        print_rows("repository root: check .", measure(settings, checkout, args.runs, args.callgrind))
    print(f"load average after {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
