#!/usr/bin/env python3
"""Benchmark: `mbridge-lint lsp` on huge generated YAML documents.

Usage: bench/lsp_huge_bench.py [--binary PATH] [--sizes MB,MB,...] [--runs N]

For each size it generates, in a temporary folder, two documents of that many megabytes (10^6 bytes):
  typos: a model section with one unknown field per line, so one error per line (the worst case for
         publishing: without the cap, a 15 MB one publishes half a million diagnostics);
  list:  a data blend list of one path per line (what a really large config holds), no diagnostic in it;
opens each in a fresh server (--debounce-ms 0) and measures the time from didOpen to its first
publishDiagnostics, the server's CPU time for it, its peak resident memory (VmHWM) and the bytes published. A
document above the linter's 16 MiB file limit is answered with the IN001 that `check` gives for the file.
Prints a table; fails (exit 1) when a document above the limit is not answered within 2 s, or any answer carries
more than the cap (1,000) plus one summary.
"""
import argparse
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bridge_lsp_bench import DEFAULT_BINARY, Server, published  # noqa: E402

LIMIT_BYTES = 16 << 20
OVER_LIMIT_TARGET_S = 2.0
MAX_DIAGNOSTICS = 1000
HEADER = ("model:\n  num_layers: 4\n  recompute_granularity: full\n  recompute_method: uniform\n"
          "  recompute_num_layers: 1\n")


def generate(kind, megabytes, path):
    size, i = 0, 0
    with open(path, "w") as f:
        f.write(HEADER)
        if kind == "list":
            f.write("dataset:\n  blend:\n")
        while size < megabytes * 1e6:
            line = f"  unknown_field_{i}: {i}\n" if kind == "typos" else f"    - /data/corpus/shard_{i:07d}_text\n"
            f.write(line)
            size += len(line)
            i += 1
    return i


def peak_rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def measure_one(binary, path):
    with open(path) as f:
        text = f.read()
    server = Server(binary, os.path.dirname(path), "0.20.dev")
    try:
        server.request("initialize", {"processId": os.getpid(), "rootUri": None,
                                      "capabilities": {"general": {"positionEncodings": ["utf-8"]}}})
        server.notify("initialized", {})
        uri = "file://" + path
        # Encoded before the clock starts: the figure is the server's, from the first byte it reads.
        body = json.dumps({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                           "params": {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}}})
        frame = b"Content-Length: %d\r\n\r\n" % len(body.encode()) + body.encode()
        cpu_before = server.cpu_seconds()
        start = time.perf_counter()
        server.proc.stdin.write(frame)
        server.proc.stdin.flush()
        message = server.wait(published(uri, 1), 600)
        seconds = time.perf_counter() - start
        cpu = server.cpu_seconds() - cpu_before
        rss = peak_rss_mib(server.proc.pid)
    finally:
        server.close()
    diagnostics = message["params"]["diagnostics"]
    codes = sorted({d.get("code", "summary") for d in diagnostics})
    return {"bytes": len(text.encode()), "seconds": seconds, "cpu": cpu, "rss_mib": rss,
            "diagnostics": len(diagnostics), "published_bytes": len(json.dumps(message)), "codes": codes}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default=DEFAULT_BINARY, help="the mbridge-lint to run (default: build/mbridge-lint)")
    parser.add_argument("--sizes", default="1,5,15,20", help="document sizes in MB (default 1,5,15,20)")
    parser.add_argument("--runs", type=int, default=1, help="runs per document; the best is printed (default 1)")
    args = parser.parse_args(argv)
    binary = os.path.abspath(args.binary)
    print(f"mbridge-lint lsp on generated YAML documents (--debounce-ms 0), {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"{'document':<14} {'bytes':>11} {'lines':>8} {'answer s':>9} {'cpu s':>6} {'peak MiB':>9} "
          f"{'diagnostics':>11} {'published':>10}  codes")
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for megabytes in [float(s) for s in args.sizes.split(",")]:
            for kind in ("typos", "list"):
                path = os.path.join(tmp, f"{kind}-{megabytes:g}mb.yaml")
                lines = generate(kind, megabytes, path)
                runs = [measure_one(binary, path) for _ in range(args.runs)]
                r = min(runs, key=lambda x: x["seconds"])
                print(f"{os.path.basename(path):<14} {r['bytes']:>11,} {lines:>8,} {r['seconds']:>9.2f} "
                      f"{r['cpu']:>6.2f} {r['rss_mib']:>9.0f} {r['diagnostics']:>11,} {r['published_bytes']:>10,}  "
                      f"{' '.join(r['codes'])}")
                if r["diagnostics"] > MAX_DIAGNOSTICS + 1:
                    ok = False
                if r["bytes"] > LIMIT_BYTES and r["seconds"] > OVER_LIMIT_TARGET_S:
                    ok = False
                os.remove(path)
    print(f"targets: at most {MAX_DIAGNOSTICS} diagnostics and a summary per document; above the 16 MiB limit "
          f"answered within {OVER_LIMIT_TARGET_S:.0f} s: {'met' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
