#!/usr/bin/env python3
"""Benchmark: several mbridge-lint binaries on the same check, runs interleaved.

Usage: bench/compare_binaries.py BRIDGE_CHECKOUT BINARY... [--runs N] [--jobs N] [-- CHECK_ARGS...]

Runs `BINARY check -j JOBS CHECK_ARGS` in the checkout (default: the recipe trees, `src/megatron/bridge/recipes
src/megatron/bridge/perf_recipes`) for each binary in turn, N rounds, the order reversed every other round (A, B, C,
C, B, A, ...), so that a change in the machine's speed hits every binary alike. Prints, per binary, CPU time (user +
system: steadier than wall time on a shared machine) median and best, wall time median, peak memory, the exit code
and the summary line, and against the first binary: the ratio of CPU medians, of bests, and the median (with the
quartiles) of the per-round ratios. On a VM whose speed drifts by ±20 % from one run to the next, the per-round
ratio is the steadiest of the three. The load average is printed before and after. Exit status 0.
"""
import argparse
import os
import statistics
import subprocess
import sys

RECIPE_DIRS = ["src/megatron/bridge/recipes", "src/megatron/bridge/perf_recipes"]

# Runs the command, prints its last output line, then "CPU WALL PEAK_KIB EXIT" (this process's one child).
WRAPPER = """
import resource, subprocess, sys, time
t = time.perf_counter()
p = subprocess.run(sys.argv[1:], capture_output=True, text=True, errors="replace")
wall = time.perf_counter() - t
u = resource.getrusage(resource.RUSAGE_CHILDREN)
lines = [l for l in p.stdout.splitlines() if l.strip()]
print(lines[-1] if lines else "")
print(f"{u.ru_utime + u.ru_stime:.3f} {wall:.3f} {u.ru_maxrss} {p.returncode}")
"""


def run(binary, checkout, jobs, args):
    out = subprocess.run([sys.executable, "-c", WRAPPER, binary, "check", "-j", str(jobs), *args], cwd=checkout,
                         capture_output=True, text=True).stdout.splitlines()
    cpu, wall, rss, code = out[-1].split()
    return {"cpu": float(cpu), "wall": float(wall), "rss_mib": int(rss) / 1024, "exit": int(code),
            "summary": out[-2] if len(out) > 1 else ""}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout")
    parser.add_argument("binaries", nargs="+")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--jobs", type=int, default=1)
    if argv is None:
        argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        extra = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    args = parser.parse_args(argv)
    check_args = extra or RECIPE_DIRS
    binaries = [os.path.abspath(b) for b in args.binaries]
    print(f"check -j {args.jobs} {' '.join(check_args)} in {args.checkout}; {args.runs} rounds interleaved; "
          f"load average before {os.getloadavg()[0]:.2f}")
    results = {b: [] for b in binaries}
    for round_number in range(args.runs):
        for b in binaries if round_number % 2 == 0 else binaries[::-1]:
            results[b].append(run(b, args.checkout, args.jobs, check_args))
    print(f"load average after {os.getloadavg()[0]:.2f}")
    first = results[binaries[0]]
    base = statistics.median(r["cpu"] for r in first)
    base_best = min(r["cpu"] for r in first)
    for b in binaries:
        rs = results[b]
        cpu = statistics.median(r["cpu"] for r in rs)
        best = min(r["cpu"] for r in rs)
        ratios = sorted(r["cpu"] / f["cpu"] for r, f in zip(rs, first))
        quartiles = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else [ratios[0]] * 3
        print(f"{b}\n    CPU median {cpu:.3f} s, best {best:.3f} s; against the first: medians {cpu / base - 1:+.1%}, "
              f"bests {best / base_best - 1:+.1%}, per round {quartiles[1] - 1:+.1%} (quartiles {quartiles[0] - 1:+.1%} "
              f"to {quartiles[2] - 1:+.1%})\n    wall median {statistics.median(r['wall'] for r in rs):.3f} s; peak "
              f"{max(r['rss_mib'] for r in rs):.0f} MiB; exit {sorted({r['exit'] for r in rs})}\n    {rs[-1]['summary']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
