#!/usr/bin/env python3
"""Benchmark: `mbridge-lint lsp` on the largest recipe files of a Megatron Bridge checkout.

Usage: bench/bridge_lsp_bench.py BRIDGE_CHECKOUT [--binary PATH] [--files N] [--edits N] [--mcore REV]

Starts the real `mbridge-lint lsp` over stdio (JSON-RPC, Content-Length framing) with `--debounce-ms 0`, so the
figures exclude the debounce. For each of the N largest recipe files under src/megatron/bridge/recipes and
perf_recipes (by lines; a recipe file defines a function annotated `-> ConfigContainer` or named `*_config`), it
measures
  open: didOpen -> the first publishDiagnostics for that document (sent right after initialize);
  edit: didChange -> the publishDiagnostics that carries the new version, for small realistic edits: a recompute
        value toggled ("selective" <-> "full", a layer count +1 / -1) and back; a file without one gets a comment
        line added and removed; and the server's CPU time per edit (mean), which other work on the machine inflates
        less than wall time.
  first: `initialize` sent -> the first publishDiagnostics of a fresh server (a client starting with the file open),
        and the server's CPU time until then, which other work on the machine does not inflate. The server starts
        with an empty cache of parsed modules of its own (MBRIDGE_LINT_CACHE_DIR): the first start on a tree.
  warm: the same for a second fresh server on the same file with the cache the first one left: an editor started
        again on a tree it has seen (the modules are read back instead of parsed).
The checkout is only read. Prints a table and fails (exit 1) when an edit's p95 is over 100 ms, an open over 1 s or
the first diagnostics over 300 ms.
"""
import argparse
import json
import os
import re
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_BINARY = os.path.join(HERE, "..", "build", "mbridge-lint")
EDIT_P95_TARGET_MS = 100.0
OPEN_TARGET_MS = 1000.0
FIRST_TARGET_MS = 300.0

RECIPE_DEF = re.compile(r"^def \w+\([^)]*\)\s*->\s*ConfigContainer|^def [a-z]\w*_config\(", re.M)
# A recompute value written as a literal: what the edits toggle.
TOGGLES = [
    (re.compile(r'(recompute_granularity\s*=\s*)"(selective|full)"'), lambda v: "full" if v == "selective" else "selective", True),
    (re.compile(r"(recompute_num_layers\s*=\s*)(\d+)"), lambda v: str(int(v) + 1), False),
]


def python_files(checkout):
    """(path, text) of every Python file under the recipe folders of a checkout, in a stable order."""
    base = os.path.join(checkout, "src", "megatron", "bridge")
    for top in ("recipes", "perf_recipes"):
        for dirpath, dirnames, filenames in os.walk(os.path.join(base, top)):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "__pycache__")
            for name in sorted(filenames):
                if name.endswith(".py"):
                    path = os.path.join(dirpath, name)
                    with open(path, encoding="utf-8", errors="replace") as f:
                        yield path, f.read()


def largest_recipe_files(checkout, count):
    found = [(text.count("\n"), path) for path, text in python_files(checkout) if RECIPE_DEF.search(text)]
    found.sort(key=lambda t: (-t[0], t[1]))
    return found[:count]


def line_col(text, offset):
    line = text.count("\n", 0, offset)
    return line, offset - (text.rfind("\n", 0, offset) + 1)


def edit_plan(text, count):
    """`count` edits as (range start, range end, new text) on the text as it is when each is sent."""
    for pattern, toggle, quoted in TOGGLES:
        m = pattern.search(text)
        if not m:
            continue
        start = m.start(2) - (1 if quoted else 0)
        old = m.group(2)
        values = [old, toggle(old)]
        edits, current = [], old
        for i in range(count):
            new = values[(i + 1) % 2]
            wrap = '"' if quoted else ""
            edits.append((start, start + len(current) + 2 * len(wrap), f"{wrap}{new}{wrap}"))
            current = new
        return edits, f"{m.group(1).strip()} {old} <-> {values[1]}"
    # No literal recompute value: add a comment line at the end and take it away again.
    end = len(text)
    comment = "# edited\n"
    edits = [(end, end, comment) if i % 2 == 0 else (end, end + len(comment), "") for i in range(count)]
    return edits, "comment line added / removed"


class Server:
    def __init__(self, binary, cwd, mcore, cache_dir=None):
        env = dict(os.environ, MBRIDGE_LINT_CACHE_DIR=cache_dir or "off")
        self.proc = subprocess.Popen([binary, "lsp", "--debounce-ms", "0"] + (["--mcore", mcore] if mcore else []), cwd=cwd,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        self.buffer = b""
        self.next_id = 0

    def send(self, message):
        body = json.dumps(dict(message, jsonrpc="2.0")).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def request(self, method, params):
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        return self.wait(lambda m: m.get("id") == self.next_id and "method" not in m, 60)

    def notify(self, method, params):
        self.send({"method": method, "params": params})

    def read_message(self, deadline):
        fd = self.proc.stdout.fileno()
        while True:
            head_end = self.buffer.find(b"\r\n\r\n")
            if head_end >= 0:
                length = int(re.search(rb"Content-Length: *(\d+)", self.buffer[:head_end], re.I).group(1))
                if len(self.buffer) >= head_end + 4 + length:
                    body = self.buffer[head_end + 4:head_end + 4 + length]
                    self.buffer = self.buffer[head_end + 4 + length:]
                    return json.loads(body)
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError("no answer from the server")
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise EOFError("the server exited")
            self.buffer += chunk

    def wait(self, predicate, timeout):
        deadline = time.monotonic() + timeout
        while True:
            message = self.read_message(deadline)
            if predicate(message):
                return message

    def cpu_seconds(self):
        """CPU time the server has used (user + system, all threads): a figure that load on the machine inflates less
        than wall time."""
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def close(self):
        try:
            self.request("shutdown", None)
            self.notify("exit", None)
            self.proc.wait(timeout=10)
        except Exception:
            self.proc.kill()
            self.proc.wait()


def published(uri, version=None):
    def match(m):
        if m.get("method") != "textDocument/publishDiagnostics" or m["params"]["uri"] != uri:
            return False
        return version is None or m["params"].get("version") == version
    return match


def percentile(values, p):
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, int(round(p / 100.0 * len(ordered) + 0.5)) - 1))
    return ordered[k]


def measure(checkout, binary=DEFAULT_BINARY, files=5, edits=20, mcore=None):
    """Figures: {"debounce_ms": 0, "edits": N, "rows": [{"file", "lines", "edit", "open_ms", "first_ms",
    "first_cpu_ms", "warm_ms", "warm_cpu_ms", "edit_p50_ms",
    "edit_p95_ms", "edit_max_ms", "edit_cpu_ms" (server CPU per edit, mean), "diagnostics"}, ...]}, one row per file."""
    checkout = os.path.abspath(checkout)
    binary = os.path.abspath(binary)
    rows = []
    for lines, path in largest_recipe_files(checkout, files):
        cache = tempfile.mkdtemp(prefix="mbl-lsp-bench-")
        try:
            rows.append(measure_file(checkout, binary, mcore, path, lines, edits, cache))
            warm = Server(binary, checkout, mcore, cache)
            try:
                _, _, rows[-1]["warm_ms"], rows[-1]["warm_cpu_ms"] = start_with_file(warm, checkout, path)
            finally:
                warm.close()
        finally:
            shutil.rmtree(cache, ignore_errors=True)
    return {"debounce_ms": 0, "edits": edits, "rows": rows}


def start_with_file(server, checkout, path):
    """initialize, then didOpen of `path`; returns (its text, the first publishDiagnostics, ms from initialize to it,
    the server's CPU ms until then)."""
    initialize_at = time.perf_counter()
    server.request("initialize", {"processId": os.getpid(), "rootUri": "file://" + checkout,
                                  "capabilities": {"general": {"positionEncodings": ["utf-8"]}}})
    server.notify("initialized", {})
    with open(path, encoding="utf-8") as f:
        text = f.read()
    uri = "file://" + path
    server.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}})
    first = server.wait(published(uri, 1), 120)
    return text, first, (time.perf_counter() - initialize_at) * 1000, server.cpu_seconds() * 1000


def measure_file(checkout, binary, mcore, path, lines, edits, cache):
    """The figures of one file with a fresh server whose cache of parsed modules is `cache` (empty)."""
    server = Server(binary, checkout, mcore, cache)
    try:
        uri = "file://" + path
        text, first, first_ms, first_cpu_ms = start_with_file(server, checkout, path)
        open_ms = first_ms  # the client opens the file right after initialize
        plan, what = edit_plan(text, edits)
        times, diagnostics = [], len(first["params"]["diagnostics"])
        cpu_before = server.cpu_seconds()
        for i, (b, e, new) in enumerate(plan):
            version = i + 2
            (sl, sc), (el, ec) = line_col(text, b), line_col(text, e)
            change = {"range": {"start": {"line": sl, "character": sc}, "end": {"line": el, "character": ec}},
                      "text": new}
            text = text[:b] + new + text[e:]
            start = time.perf_counter()
            server.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                     "contentChanges": [change]})
            server.wait(published(uri, version), 120)
            times.append((time.perf_counter() - start) * 1000)
        cpu_ms = (server.cpu_seconds() - cpu_before) * 1000 / max(1, len(plan))
    finally:
        server.close()
    return {"file": os.path.relpath(path, checkout), "lines": lines, "edit": what, "open_ms": open_ms,
            "first_ms": first_ms, "first_cpu_ms": first_cpu_ms, "edit_p50_ms": statistics.median(times),
            "edit_p95_ms": percentile(times, 95), "edit_max_ms": max(times), "edit_cpu_ms": cpu_ms,
            "diagnostics": diagnostics}


def print_table(figures, out=sys.stdout):
    """Prints the figures of measure() as a table; returns whether the targets are met."""
    rows = figures["rows"]
    print(f"{'file':<55} {'lines':>5} {'first ms':>9} {'(cpu)':>6} {'warm ms':>8} {'(cpu)':>6} {'edit p50':>9} {'edit p95':>9} {'max':>7} {'cpu/edit':>9}  edit",
          file=out)
    for r in rows:
        print(f"{r['file']:<55} {r['lines']:>5} {r['first_ms']:>9.1f} {r['first_cpu_ms']:>6.0f} "
              f"{r['warm_ms']:>8.1f} {r['warm_cpu_ms']:>6.0f} "
              f"{r['edit_p50_ms']:>9.1f} {r['edit_p95_ms']:>9.1f} "
              f"{r['edit_max_ms']:>7.1f} {r['edit_cpu_ms']:>9.1f}  {r['edit']}", file=out)
    ok = all(r["edit_p95_ms"] <= EDIT_P95_TARGET_MS and r["open_ms"] <= OPEN_TARGET_MS and
             r["first_ms"] <= FIRST_TARGET_MS for r in rows)
    print(f"targets: edit p95 <= {EDIT_P95_TARGET_MS:.0f} ms, open <= {OPEN_TARGET_MS:.0f} ms, first diagnostics <= "
          f"{FIRST_TARGET_MS:.0f} ms after initialize: {'met' if ok else 'MISSED'}", file=out)
    return ok


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", help="a Megatron Bridge checkout (only read)")
    parser.add_argument("--binary", default=DEFAULT_BINARY, help="the mbridge-lint to run (default: build/mbridge-lint)")
    parser.add_argument("--files", type=int, default=5, help="how many of the largest recipe files (default 5)")
    parser.add_argument("--edits", type=int, default=20, help="edits per file (default 20)")
    parser.add_argument("--mcore", default=None, help="--mcore for the server (default: the revision the checkout pins)")
    args = parser.parse_args(argv)
    figures = measure(args.checkout, args.binary, args.files, args.edits, args.mcore)
    print(f"mbridge-lint lsp on {args.checkout} (--debounce-ms 0, {args.edits} edits per file, {os.cpu_count()} cores)")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (other work makes wall times longer)")
    return 0 if print_table(figures) else 1


if __name__ == "__main__":
    sys.exit(main())
