#!/usr/bin/env python3
"""Benchmark: `mbridge-lint check` on huge generated Python files, each per file under 2 s and 256 MiB?

Usage: bench/python_huge_bench.py [--binary PATH] [--sizes MB,MB,...] [--only NAME,...] [--runs N] [-- ARGS...]

For each size it generates, in a temporary folder, one module per shape below of about that many megabytes
(10^6 bytes), each with a small recipe after the bulk, and runs `check FILE` on it alone in a fresh process
(`-j 1`), measuring wall time, CPU time (user + system) and peak resident memory (the child's ru_maxrss). Shapes:
  list          DATA = [0, 1, 2, ...], one element per line
  dict          DATA = {"k0": 0, ...}, one pair per line
  string        DATA = "xxx...", one literal on one line
  statements    a0 = 0 / a1 = 1 / ..., one assignment per line (millions of tokens)
  one_line      a = 1; a = 1; ... on a single line
  plus_chain    X = 1 + 1 + ... (a left-nested expression as deep as it is long)
  nested_parens X = ((((...1...)))) as deep as the file allows
  nested_lists  X = [[[[...]]]]
  calls         f(0) / f(1) / ..., one module-level call per line
  recipes       def r0_config(): return ConfigContainer(...) / ..., many small recipes
  unclosed      DATA = ( followed by the list shape's elements, never closed (tree-sitter's error recovery)
  comments      # ... lines (what reading and parsing alone cost)
  garbage       Python tokens in a random order (seeded): a syntax error everywhere, tree-sitter's error recovery
Prints one line per file: bytes, wall s, CPU s, peak MiB, exit code and the codes reported; then whether every
file met 2 s of CPU and 256 MiB. Extra arguments after `--` go to `check` (`-- --limit python-nodes=...`).
"""
import argparse
import os
import random
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_BINARY = os.path.join(HERE, "..", "build", "mbridge-lint")
TARGET_SECONDS = 2.0
TARGET_MIB = 256

HEAD = ("from megatron.bridge.training.config import ConfigContainer\n"
        "from megatron.bridge.models import GPTModelProvider\n\n")
RECIPE = ("\n\ndef huge_config() -> ConfigContainer:\n"
          "    cfg = ConfigContainer(model=GPTModelProvider(num_layers=2))\n"
          "    cfg.model.recompute_granularity = \"full\"\n    return cfg\n")


def repeat_to(size, make):
    """Lines from make(i) until `size` bytes."""
    out, total, i = [], 0, 0
    while total < size:
        line = make(i)
        out.append(line)
        total += len(line)
        i += 1
    return "".join(out)


def generate(shape, size):
    if shape == "list":
        body = "DATA = [\n" + repeat_to(size, lambda i: f"    {i},\n") + "]\n"
    elif shape == "dict":
        body = "DATA = {\n" + repeat_to(size, lambda i: f"    \"k{i}\": {i},\n") + "}\n"
    elif shape == "string":
        body = "DATA = \"" + "x" * size + "\"\n"
    elif shape == "statements":
        body = repeat_to(size, lambda i: f"a{i} = {i}\n")
    elif shape == "one_line":
        body = "a = 1; " * (size // 7) + "\n"
    elif shape == "plus_chain":
        body = "X = " + "1 + " * (size // 4) + "1\n"
    elif shape == "nested_parens":
        depth = size // 2
        body = "X = " + "(" * depth + "1" + ")" * depth + "\n"
    elif shape == "nested_lists":
        depth = size // 2
        body = "X = " + "[" * depth + "]" * depth + "\n"
    elif shape == "calls":
        body = "def f(x):\n    return x\n\n\n" + repeat_to(size, lambda i: f"f({i})\n")
    elif shape == "recipes":
        body = repeat_to(size, lambda i: f"\n\ndef r{i}_config() -> ConfigContainer:\n"
                                         f"    return ConfigContainer(model=GPTModelProvider())\n")
    elif shape == "unclosed":
        body = "DATA = (\n" + repeat_to(size, lambda i: f"    {i},\n")
    elif shape == "garbage":
        rng = random.Random(1)
        body = repeat_to(size, lambda i: rng.choice(GARBAGE) + " ")
    elif shape == "comments":
        body = repeat_to(size, lambda i: f"# comment line {i} with a few words in it\n")
    else:
        raise ValueError(shape)
    return HEAD + body + RECIPE


SHAPES = ["list", "dict", "string", "statements", "one_line", "plus_chain", "nested_parens", "nested_lists",
          "calls", "recipes", "unclosed", "comments", "garbage"]
GARBAGE = [")", "(", ":", "=", "def", "class", "if", "else", ",", "1", "x", "lambda", "[", "]", "for", "in", "**", ".",
           "\n", "\n    ", "import", "from", "return", "yield", '"s"', "@", "->", "async", "await", "not"]


def measure(binary, path, extra):
    start = time.perf_counter()
    # ru_maxrss of RUSAGE_CHILDREN is the largest child so far: each run goes through a wrapper process of its own,
    # which reports its one child's figures.
    proc = subprocess.run([sys.executable, "-c", WRAPPER, binary, "check", "-j", "1", *extra, path],
                          capture_output=True, text=True, errors="replace")
    wall = time.perf_counter() - start
    lines = proc.stdout.splitlines()
    cpu, rss, code = lines[-1].split()
    output = "\n".join(lines[:-1]) + proc.stderr
    codes = [line.split()[1:] for line in lines[:-1] if line.startswith("codes:")][-1]
    return {"wall": wall, "cpu": float(cpu), "rss_mib": int(rss) / 1024, "exit": int(code), "codes": codes,
            "output": output}


# Runs the linter and prints its output, then "CPU_SECONDS PEAK_KIB EXIT" on the last line.
# (A diagnostic quotes its source line, which for some shapes is megabytes long: only the codes and the end are kept.)
WRAPPER = """
import re, resource, subprocess, sys
p = subprocess.run(sys.argv[1:], capture_output=True, text=True, errors="replace")
u = resource.getrusage(resource.RUSAGE_CHILDREN)
codes = sorted(set(re.findall(r"\\[((?:IN|RC)\\d{3})\\]", p.stdout + p.stderr)))
sys.stdout.write(p.stdout[-2000:] + p.stderr[-2000:] + "\\n" + " ".join(["codes:"] + codes) + "\\n")
print(f"{u.ru_utime + u.ru_stime:.3f} {u.ru_maxrss} {p.returncode}")
"""


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default=DEFAULT_BINARY, help="the mbridge-lint to run (default: build/mbridge-lint)")
    parser.add_argument("--sizes", default="5,15", help="file sizes in MB (default 5,15)")
    parser.add_argument("--only", default="", help="shapes to run, comma-separated (default: all)")
    parser.add_argument("--runs", type=int, default=1, help="runs per file; the one of least CPU is printed")
    parser.add_argument("--verbose", action="store_true", help="print each run's last lines of output")
    parser.add_argument("extra", nargs="*", help="arguments for check, after --")
    args = parser.parse_args(argv)
    binary = os.path.abspath(args.binary)
    shapes = args.only.split(",") if args.only else SHAPES
    print(f"mbridge-lint check -j 1 on generated Python files, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f}; binary {binary}")
    print(f"{'file':<22} {'bytes':>11} {'wall s':>7} {'cpu s':>6} {'peak MiB':>9} {'exit':>4}  codes")
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for megabytes in [float(s) for s in args.sizes.split(",")]:
            for shape in shapes:
                path = os.path.join(tmp, f"{shape}_{megabytes:g}mb.py")
                with open(path, "w") as f:
                    f.write(generate(shape, int(megabytes * 1e6)))
                runs = [measure(binary, path, args.extra) for _ in range(args.runs)]
                r = min(runs, key=lambda x: x["cpu"])
                met = r["cpu"] <= TARGET_SECONDS and r["rss_mib"] <= TARGET_MIB and r["exit"] in (0, 1, 2)
                ok = ok and met
                print(f"{os.path.basename(path):<22} {os.path.getsize(path):>11,} {r['wall']:>7.2f} {r['cpu']:>6.2f} "
                      f"{r['rss_mib']:>9.0f} {r['exit']:>4}  {' '.join(r['codes'])}{'' if met else '  (over)'}",
                      flush=True)
                if args.verbose:
                    print("    " + "\n    ".join(r["output"].strip().splitlines()[-3:]))
                os.remove(path)
    print(f"targets: each file within {TARGET_SECONDS:.0f} s of CPU and {TARGET_MIB} MiB: {'met' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
