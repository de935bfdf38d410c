#!/usr/bin/env python3
"""The wild corpus: mbridge-lint on real Megatron Bridge code nobody on this project wrote (bench/wild/sources.json).

Usage:
  bench/wild/run.py checkout CHECKOUTS_DIR [--mirror DIR] [--only ID,...]   # make the checkouts (once)
  bench/wild/run.py overrides CHECKOUTS_DIR [--only ID,...]  # every write of a recompute field, as JSON
  bench/wild/run.py CHECKOUTS_DIR [--binary PATH] [--only ID,...] [--json FILE] [--no-root]

`checkout` needs each source's repository fetched first (the `fetch` tool: github:OWNER/NAME puts a git directory at
MIRROR/OWNER+NAME/repo, MIRROR defaulting to /work/.mirror). It writes every file of the source's commit into
CHECKOUTS_DIR/ID, as `git archive COMMIT | tar -x` would, except the blobs a snapshot lacks (files of 4 MiB and more,
images); a source with `extract` also gets the file cut out of a document (a run_config.yaml dump printed in a log),
and one with `submodule` its gitlink's commit of that repository written into the submodule's folder, as
`git submodule update --init` leaves it.
Nothing is downloaded here.

The run lints each source as its users would, at the Megatron Core revision it runs (`mcore`, from its pin):
`recipes` (the CI gate on the recipe tree), `yaml` (the overlays and dumps, named one by one) and `root` (`check .` at
the repository root; the directory walk is the cli branch's). Every error is compared with the source's
`true_errors` (each tied to the Megatron Core line that raises it): an error that is not listed there is false, a
listed one that is not reported is a miss, one reported twice at the same place (`./src/x` and `src/x`) a duplicate; `pending` lists known false errors whose fix belongs to another area, with
the owner. Sources of kind `fixture` are files of this repository (tests/fixtures/...): configs rebuilt from issue
threads, run from the repository root. Prints one row per source and run; exit status 0.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def load_sources():
    with open(os.path.join(HERE, "sources.json"), encoding="utf-8") as f:
        return json.load(f)["sources"]


# --- checkouts ----------------------------------------------------------------------------------------------------

def write_blobs(git_dir, commit, dest):
    """Every blob of `commit` into `dest`; returns (files, missing)."""
    tree = subprocess.run(["git", "-C", git_dir, "ls-tree", "-r", "-z", commit], capture_output=True,
                          check=True).stdout.split(b"\0")
    blobs = []
    for entry in tree:
        if not entry:
            continue
        meta, path = entry.split(b"\t", 1)
        _, kind, sha = meta.split()
        if kind == b"blob":
            blobs.append((sha, path.decode()))
        elif kind == b"commit":  # a submodule: its directory exists, empty, as in a clone without --recursive
            os.makedirs(os.path.join(dest, path.decode()), exist_ok=True)
    cat = subprocess.Popen(["git", "-C", git_dir, "cat-file", "--batch"], stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE)
    missing = 0
    for sha, path in blobs:
        cat.stdin.write(sha + b"\n")
        cat.stdin.flush()
        header = cat.stdout.readline().split()
        if header[1] == b"missing":
            missing += 1
            continue
        data = cat.stdout.read(int(header[2]))
        cat.stdout.read(1)
        out = os.path.join(dest, path)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out, "wb") as f:
            f.write(data)
    cat.stdin.close()
    cat.wait()
    return len(blobs), missing


def extract(dest, rule):
    """Cuts the lines after the line `after` up to the first line matching `until` out of a document."""
    with open(os.path.join(dest, rule["from"]), encoding="utf-8") as f:
        lines = f.read().splitlines()
    start = lines.index(rule["after"]) + 1
    end = next(i for i in range(start, len(lines)) if re.match(rule["until"], lines[i]))
    with open(os.path.join(dest, rule["to"]), "w", encoding="utf-8") as f:
        f.write("\n".join(lines[start:end]) + "\n")


def checkout_submodule(dest, mirror, rule):
    """Writes the commit the gitlink at `rule["path"]` names, from the mirror of `rule["repo"]`, into that folder:
    the tree as `git submodule update --init` leaves it."""
    git_dir = os.path.join(mirror, rule["repo"].replace("/", "+"), "repo")
    if not os.path.isdir(git_dir):
        print(f"  no {git_dir}; fetch github:{rule['repo']} first", file=sys.stderr)
        return
    sub = os.path.join(dest, rule["path"])
    files, missing = write_blobs(git_dir, rule["commit"], sub)
    print(f"  {rule['path']}: {files} files of {rule['repo']} at {rule['commit'][:12]} ({missing} absent)")


def make_checkouts(directory, mirror, only):
    for s in load_sources():
        if s["kind"] == "fixture" or (only and s["id"] not in only):
            continue
        git_dir = os.path.join(mirror, s["repo"].replace("/", "+"), "repo")
        dest = os.path.join(directory, s["id"])
        if not os.path.isdir(git_dir):
            print(f"{s['id']}: no {git_dir}; fetch github:{s['repo']} first", file=sys.stderr)
            continue
        os.makedirs(dest, exist_ok=True)
        files, missing = write_blobs(git_dir, s["commit"], dest)
        if "extract" in s:
            extract(dest, s["extract"])
        print(f"{s['id']}: {files} files at {s['commit'][:12]} ({missing} absent from the snapshot)")
        if "submodule" in s:
            checkout_submodule(dest, mirror, s["submodule"])


# --- recompute overrides -----------------------------------------------------------------------------------------

RECOMPUTE_FIELDS = ("recompute_granularity", "recompute_method", "recompute_num_layers", "recompute_modules",
                    "distribute_saved_activations")
# An attribute write (`cfg.model.recompute_modules = [...]`) or a keyword argument (`recompute_modules=["moe"]`); a
# local variable of the same name is no write of the field.
PY_WRITE = re.compile(r"(?:\.(" + "|".join(RECOMPUTE_FIELDS) + r")\s*|\b(" + "|".join(RECOMPUTE_FIELDS) +
                      r"))=(?!=)\s*(.+?)\s*,?\s*$")


def yaml_overrides(path, shown):
    import yaml  # only this subcommand needs PyYAML
    out = []

    def walk(node, keys):
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if k.value in RECOMPUTE_FIELDS:
                    out.append({"file": shown, "line": k.start_mark.line + 1, "field": ".".join(keys + [k.value]),
                                "value": yaml.safe_load(yaml.serialize(v))})
                walk(v, keys + [str(k.value)])
        elif isinstance(node, yaml.SequenceNode):
            for v in node.value:
                walk(v, keys)

    with open(path, encoding="utf-8") as f:
        root = yaml.compose(f)
    if root is not None:
        walk(root, [])
    return out


def python_overrides(path, shown):
    """Each line of a workload table or launcher that writes a recompute field: `cfg.model.recompute_modules = [...]`,
    `recompute_modules=["moe"]` in a call, a dict entry is not (written as text, read by the workload code)."""
    out = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            code = line.split("#", 1)[0]
            m = PY_WRITE.search(code)
            if m and not code.lstrip().startswith(("def ", "if ", "elif ", "assert ", "return ")):
                out.append({"file": shown, "line": n, "field": m.group(1) or m.group(2),
                            "value": m.group(3).rstrip(",")})
    return out


def list_overrides(directory, only):
    """Every write of a recompute field in what the source's runs check, besides the recipe library: YAML overlays
    and dumps, and the performance trees (workload tables, launchers)."""
    listing = {}
    for s in load_sources():
        if s["kind"] == "fixture" or (only and s["id"] not in only):
            continue
        base = os.path.join(directory, s["id"])
        found = []
        for f in s["runs"].get("yaml", []):
            if os.path.exists(os.path.join(base, f)):
                found += yaml_overrides(os.path.join(base, f), f)
        for top in s["runs"].get("perf", []) + ["scripts/performance"]:
            for folder, _, files in sorted(os.walk(os.path.join(base, top))):
                for name in sorted(files):
                    path = os.path.join(folder, name)
                    shown = os.path.relpath(path, base)
                    if name.endswith(".py"):
                        found += python_overrides(path, shown)
                    elif name.endswith((".yaml", ".yml")) and shown not in s["runs"].get("yaml", []):
                        found += yaml_overrides(path, shown)
        uniq = {(o["file"], o["line"], o["field"]): o for o in found}
        listing[s["id"]] = [uniq[k] for k in sorted(uniq)]
    return listing


# --- the run ------------------------------------------------------------------------------------------------------

def lint(binary, cwd, paths, mcore):
    cmd = [binary, "check", *paths, "--mcore", mcore, "--format", "json", "--color", "never"]
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    try:
        diagnostics = json.loads(proc.stdout)["diagnostics"]
    except (json.JSONDecodeError, KeyError):
        diagnostics = []
    return proc.returncode, diagnostics, wall, proc.stderr.strip()


def key(d):
    return (os.path.normpath(d["file"]), d["line"], d["code"])


def under(file, paths):
    file = os.path.normpath(file)
    return any(p in (".", "") or file == os.path.normpath(p) or file.startswith(os.path.normpath(p) + os.sep)
               for p in paths)


def compare(source, diagnostics, paths):
    """A true error is a miss only where the run looked: in one of the files or folders it checked."""
    errors = [d for d in diagnostics if d["severity"] == "error"]
    true = {key(t) for t in source.get("true_errors", []) if under(t["file"], paths)}
    pending = {key(p): p["owner"] for p in source.get("pending", [])}
    found = {key(d) for d in errors}
    false = [d for d in errors if key(d) not in true and key(d) not in pending]
    held = [d for d in errors if key(d) in pending]
    return {
        "errors": len(errors), "duplicates": len(errors) - len(found), "true": len(found & true),
        "false": false, "pending": held,
        "misses": sorted(true - found),
        "by_code": sorted({(d["severity"], d["code"]) for d in diagnostics}),
    }


def run_source(binary, directory, source, no_root):
    cwd = REPO if source["kind"] == "fixture" else os.path.join(directory, source["id"])
    rows = []
    if not os.path.isdir(cwd):
        return [{"source": source["id"], "run": "-", "skipped": f"no checkout at {cwd}"}]
    for run, paths in source["runs"].items():
        if run == "root" and no_root:
            continue
        present = [p for p in paths if os.path.exists(os.path.join(cwd, p))]
        rc, diagnostics, wall, stderr = lint(binary, cwd, present, source["mcore"])
        result = compare(source, diagnostics, present)
        counts = {}
        for d in diagnostics:
            counts[f"{d['severity']} {d['code']}"] = counts.get(f"{d['severity']} {d['code']}", 0) + 1
        rows.append({"source": source["id"], "run": run, "mcore": source["mcore"], "exit": rc, "wall_s": round(wall, 2),
                     "counts": counts, **result, "stderr": stderr[-300:]})
    return rows


def print_table(rows):
    print(f"{'source':<26} {'run':<8} {'mcore':<9} {'exit':>4} {'errors':>6} {'true':>5} {'false':>5} "
          f"{'misses':>6} {'pending':>7} {'wall s':>7}")
    for r in rows:
        if "skipped" in r:
            print(f"{r['source']:<26} {r['skipped']}")
            continue
        print(f"{r['source']:<26} {r['run']:<8} {r['mcore']:<9} {r['exit']:>4} {r['errors']:>6} {r['true']:>5} "
              f"{len(r['false']):>5} {len(r['misses']):>6} {len(r['pending']):>7} {r['wall_s']:>7}")
    falses = [(r["source"], d) for r in rows if "false" in r for d in r["false"]]
    if falses:
        print("\nfalse errors:")
        for source, d in falses:
            print(f"  {source}: {d['file']}:{d['line']}: {d['code']} {d['message']}")
    misses = [(r["source"], m) for r in rows if "misses" in r for m in r["misses"]]
    if misses:
        print("\nmisses:")
        for source, (file, line, code) in misses:
            print(f"  {source}: {file}:{line}: {code}")
    held = [(r["source"], d) for r in rows if "pending" in r for d in r["pending"]]
    if held:
        print("\nknown false errors owned elsewhere (pending):")
        for source, d in held:
            print(f"  {source}: {d['file']}:{d['line']}: {d['code']} {d['message']}")
    roots = [r for r in rows if r.get("run") == "root"]
    if roots:
        print("\ncheck . at the repository root (every diagnostic, by severity and code):")
        for r in roots:
            print(f"  {r['source']}: exit {r['exit']}, {r['wall_s']} s, {r['duplicates']} error(s) reported twice: "
                  + ", ".join(f"{n} {k}" for k, n in sorted(r["counts"].items())))


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "checkout":
        p = argparse.ArgumentParser()
        p.add_argument("command")
        p.add_argument("directory")
        p.add_argument("--mirror", default="/work/.mirror")
        p.add_argument("--only", default="")
        a = p.parse_args()
        make_checkouts(a.directory, a.mirror, set(filter(None, a.only.split(","))))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "overrides":
        p = argparse.ArgumentParser()
        p.add_argument("command")
        p.add_argument("directory")
        p.add_argument("--only", default="")
        a = p.parse_args()
        json.dump(list_overrides(a.directory, set(filter(None, a.only.split(",")))), sys.stdout, indent=1)
        print()
        return
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("directory")
    p.add_argument("--binary", default=os.path.join(REPO, "build", "mbridge-lint"))
    p.add_argument("--only", default="")
    p.add_argument("--json")
    p.add_argument("--no-root", action="store_true", help="leave out the `check .` runs (slow)")
    a = p.parse_args()
    binary = os.path.abspath(a.binary)
    only = set(filter(None, a.only.split(",")))
    rows = []
    for s in load_sources():
        if not only or s["id"] in only:
            rows += run_source(binary, a.directory, s, a.no_root)
    print_table(rows)
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
