#!/usr/bin/env python3
"""Megatron Bridge's own saved configs, the launcher as the oracle (issue 34, item 6).

Runs on a machine with PyTorch and transformers (the GPU machine; no GPU is used, no network):

  make_dumps.py --stage STAGE --catalog schemas/models/hf-architectures.json --out OUT [--jobs 14]

STAGE holds what travels there (made with git from the mirrors, see README.md): `bridge/` (Bridge's `src/`,
`scripts/performance/` and `scripts/common/` at 067f987), `mcore/` (Megatron-LM's `megatron/{core,training,post_training,rl}` at the
gitlink pin 2a75ac12c54b), `pylibs/` (OmegaConf 2.2 and the ANTLR 4.9 runtime from Debian's python3-omegaconf and
python3-antlr4, pure Python).

Two kinds of dumps:
- `perf/NAME.yaml`: `scripts/performance/run_script.py ... --dryrun --save_config_filepath` (Bridge PR #3098), the
  launcher itself: the flat performance recipe NAME, every launcher override applied, `runtime_config_update` run,
  saved with `ConfigContainer.to_yaml`. run_script's own main() with that argv, one process a family.
- `library/NAME.yaml`: the library recipe function NAME called with no arguments and saved with `to_yaml`, what
  `run_recipe.py` starts from.

Modules Bridge imports unconditionally that are not installed there get an import-only stand-in (`standins.py`
beside this file). Hugging Face configs come from the catalog the linter bundles, written as an offline hub cache,
so that both sides read the same architecture. OUT receives dumps.tar.gz, manifest.json and log.txt.
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import subprocess
import sys
import tarfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PRECISION = {"bf16": "bf16", "fp8cs": "fp8_cs", "fp8mx": "fp8_mx", "fp8sc": "fp8_sc", "nvfp4": "nvfp4"}
PERF_FN = re.compile(r"^def ((\w+?)_(pretrain|sft|peft)_(\d+)gpu_(h100|gb200)_(bf16|fp8cs)_config)\(\)", re.M)
LIB_FN = re.compile(r"^def ([a-z]\w*_(?:pretrain|sft|peft)_\w*config)\(\s*\)", re.M)


REVISION_CONSTANT = re.compile(r'^(_?\w*?)REVISION\s*=\s*"([^"]+)"', re.M)


def pinned_revisions(bridge):
    """{model id: revisions} the recipes pin: a `X_REVISION = "..."` constant beside its `X_ID = "org/name"`."""
    out = {}
    for sub in ("recipes", "perf_recipes"):
        for folder, _, files in os.walk(os.path.join(bridge, "src/megatron/bridge", sub)):
            for name in files:
                if not name.endswith(".py"):
                    continue
                with open(os.path.join(folder, name), encoding="utf-8") as f:
                    text = f.read()
                for prefix, revision in REVISION_CONSTANT.findall(text):
                    model = re.search(rf'^{re.escape(prefix)}ID\s*=\s*"([^"]+)"', text, re.M)
                    if model:
                        out.setdefault(model.group(1), set()).add(revision)
    return out


def write_hub_cache(catalog_path, hub, revisions):
    """Each catalog model as hub/models--ORG--NAME/{refs/main,snapshots/HASH/config.json}, and under each revision
    a recipe pins: a commit as its own snapshot (the hub looks a commit up there), a branch or tag as a ref."""
    with open(catalog_path, encoding="utf-8") as f:
        models = json.load(f)["models"]
    for model_id, entry in models.items():
        config = {k: v for k, v in entry.items() if k not in ("source", "confidence", "notes", "key_sources")}
        folder = os.path.join(hub, "models--" + model_id.replace("/", "--"))
        snapshot = hashlib.sha1(model_id.encode()).hexdigest()
        os.makedirs(os.path.join(folder, "refs"), exist_ok=True)
        os.makedirs(os.path.join(folder, "snapshots", snapshot), exist_ok=True)
        with open(os.path.join(folder, "refs", "main"), "w") as f:
            f.write(snapshot)
        with open(os.path.join(folder, "snapshots", snapshot, "config.json"), "w") as f:
            json.dump(config, f, indent=1)
        for revision in revisions.get(model_id, ()):
            if re.fullmatch(r"[0-9a-f]{40}", revision):
                os.makedirs(os.path.join(folder, "snapshots", revision), exist_ok=True)
                with open(os.path.join(folder, "snapshots", revision, "config.json"), "w") as f:
                    json.dump(config, f, indent=1)
            else:
                with open(os.path.join(folder, "refs", revision), "w") as f:
                    f.write(snapshot)
    return len(models)


def perf_combos(bridge):
    """The flat performance recipes for H100 and GB200 in bf16 and fp8cs, without a named variant."""
    combos = []
    root = os.path.join(bridge, "src/megatron/bridge/perf_recipes")
    for family in sorted(os.listdir(root)):
        for gpu in ("h100", "gb200"):
            folder = os.path.join(root, family, gpu)
            if not os.path.isdir(folder):
                continue
            for name in sorted(os.listdir(folder)):
                if not name.endswith(".py") or name == "__init__.py":
                    continue
                with open(os.path.join(folder, name), encoding="utf-8") as f:
                    text = f.read()
                for m in PERF_FN.finditer(text):
                    combos.append({"kind": "perf", "name": m.group(1), "family": family, "recipe": m.group(2),
                                   "task": m.group(3), "num_gpus": m.group(4), "gpu": m.group(5),
                                   "precision": PRECISION[m.group(6)],
                                   "file": os.path.relpath(os.path.join(folder, name), bridge)})
    return combos


def library_recipes(bridge):
    """The library recipes for H100 that take no arguments, by family module."""
    out = {}
    root = os.path.join(bridge, "src/megatron/bridge/recipes")
    for family in sorted(os.listdir(root)):
        folder = os.path.join(root, family, "h100")
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            if not name.endswith(".py") or name == "__init__.py":
                continue
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                text = f.read()
            module = f"megatron.bridge.recipes.{family}.h100.{name[:-3]}"
            for fn in LIB_FN.findall(text):
                out.setdefault(module, []).append(
                    {"kind": "library", "name": fn, "module": module,
                     "file": os.path.relpath(os.path.join(folder, name), bridge)})
    return out


# Each runner prints one `MBL-RESULT {"NAME": status}` line a recipe as it goes, so that a process stopped at its
# time limit still reports what it reached; a failure keeps its traceback's tail, where the fault is.
LIBRARY_RUNNER = r"""
import importlib, json, sys, traceback
out_dir, work = sys.argv[1], json.loads(sys.argv[2])
def report(name, status):
    print("MBL-RESULT " + json.dumps({name: status}), flush=True)
def failure(e):
    return "".join(traceback.format_exception(type(e), e, e.__traceback__)).strip()[-800:]
for module, names in work:
    try:
        mod = importlib.import_module(module)
    except BaseException as e:
        for n in names:
            report(n, "import: " + failure(e))
        continue
    for n in names:
        try:
            getattr(mod, n)().to_yaml(f"{out_dir}/{n}.yaml")
            report(n, "ok")
        except BaseException as e:
            report(n, failure(e))
"""


DEADLINE = [float("inf")]  # no process starts after it, so that what was dumped is packed in time
PRETRAINED = ["/tmp/mbl-pretrained"]  # an empty folder given as a PEFT launch's --pretrained_checkpoint (main makes it)


# run_script.py's own main(), once for each launch, in one process a family (importing the stack once): the argv
# of `python scripts/performance/run_script.py ARGS`; its dry run ends with sys.exit(0) once the YAML is written.
PERF_RUNNER = r"""
import contextlib, io, json, os, sys, traceback
sys.path.insert(0, os.path.join(os.getcwd(), "scripts/performance"))
def report(name, status):
    print("MBL-RESULT " + json.dumps({name: status}), flush=True)
try:
    import run_script
except BaseException as e:
    for s in json.loads(sys.argv[1]):
        report(s["name"], "import: " + "".join(traceback.format_exception(type(e), e, e.__traceback__)).strip()[-800:])
    sys.exit(0)
for spec in json.loads(sys.argv[1]):
    for name in ("WORLD_SIZE", "RANK"):  # the dry run sets them from --num_gpus when they are absent
        os.environ.pop(name, None)
    sys.argv = ["scripts/performance/run_script.py", *spec["args"]]
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            run_script.main()
        report(spec["name"], "returned without the dry run's exit")
    except SystemExit as e:
        report(spec["name"], "ok" if e.code in (0, None) and os.path.exists(spec["path"]) else f"exit {e.code}")
    except BaseException as e:
        report(spec["name"], "".join(traceback.format_exception(type(e), e, e.__traceback__)).strip()[-800:])
"""

PROCESS_SECONDS = [150]  # one runner process's limit (--process-seconds); families are split so that parts fit


def run_runner(argv, cwd, env, names):
    """Runs a runner, returning its statuses by name and its wall time; a name it never reported gets why."""
    start = time.time()
    timed_out = False
    try:
        p = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=PROCESS_SECONDS[0])
        stdout, stderr = p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        timed_out = True
        stdout = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        stderr = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
    results = {}
    for line in stdout.splitlines():
        if line.startswith("MBL-RESULT "):
            results.update(json.loads(line[len("MBL-RESULT "):]))
    missing = f"timed out after {PROCESS_SECONDS[0]} s" if timed_out else (stderr or "no output").strip()[-800:]
    return {n: results.get(n, missing) for n in names}, round(time.time() - start, 1)


PERF_PER_PROCESS = 6  # launches one process runs after importing the stack (about 25 s) once
LIBRARY_PER_PROCESS = 12  # library recipes likewise; a module's recipes stay in one process


def split_modules(modules):
    """A family's (module, recipes) pairs in parts of about LIBRARY_PER_PROCESS recipes."""
    parts, part, size = [], [], 0
    for module, entries in modules:
        if part and size + len(entries) > LIBRARY_PER_PROCESS:
            parts.append(part)
            part, size = [], 0
        part.append((module, entries))
        size += len(entries)
    return parts + [part] if part else parts


def launcher_args(combo, path):
    # A PEFT launch asserts that its pretrained checkpoint path exists (ConfigContainer.validate, checkpoint.finalize);
    # the dry run never reads it, so an empty folder does.
    checkpoint = ["--pretrained_checkpoint", PRETRAINED[0]] if combo["task"] == "peft" else []
    return ["--model_family_name", combo["family"], "--model_recipe_name", combo["recipe"], "--task", combo["task"],
            "--num_gpus", combo["num_gpus"], "--gpu", combo["gpu"], "--compute_dtype", combo["precision"],
            *checkpoint, "--dryrun", "--save_config_filepath", path]


def run_perf(family, combos, bridge, env, out):
    if time.time() > DEADLINE[0]:
        return [{**c, "command": "", "status": "not run: deadline", "seconds": 0} for c in combos]
    specs = [{"name": c["name"], "path": os.path.join(out, "perf", c["name"] + ".yaml"),
              "args": launcher_args(c, os.path.join(out, "perf", c["name"] + ".yaml"))} for c in combos]
    results, took = run_runner([sys.executable, "-c", PERF_RUNNER, json.dumps(specs)], bridge, env,
                               [s["name"] for s in specs])
    return [{**c, "command": "python scripts/performance/run_script.py " + " ".join(s["args"][:-1]) + " OUT.yaml",
             "status": results.get(c["name"], "not reached"), "seconds": took} for c, s in zip(combos, specs)]


def run_library_family(modules, bridge, env, out):
    entries = [e for _, es in modules for e in es]
    if time.time() > DEADLINE[0]:
        return [{**e, "command": "", "status": "not run: deadline", "seconds": 0} for e in entries]
    work = [(m, [e["name"] for e in es]) for m, es in modules]
    results, took = run_runner([sys.executable, "-c", LIBRARY_RUNNER, os.path.join(out, "library"), json.dumps(work)],
                               bridge, env, [e["name"] for e in entries])
    return [{**e, "command": f"{e['module']}.{e['name']}().to_yaml(OUT.yaml)",
             "status": results.get(e["name"], "not reached"), "seconds": took} for e in entries]


def main():
    a = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    a.add_argument("--stage", required=True)
    a.add_argument("--catalog", required=True)
    a.add_argument("--out", required=True)
    a.add_argument("--jobs", type=int, default=14)
    a.add_argument("--only", default="", help="a regular expression the recipe names must match")
    a.add_argument("--seconds", type=float, default=float("inf"), help="start no process after this many seconds")
    a.add_argument("--hide-gpu", action="store_true",
                   help="CUDA_VISIBLE_DEVICES empty; by default the machine's GPU is visible, because some recipes and "
                        "validate() read its properties (apply_flex_dispatcher_backend, dsa_kernel_backend=cudnn)")
    a.add_argument("--process-seconds", type=float, default=PROCESS_SECONDS[0], help="one runner process's limit")
    args = a.parse_args()
    PROCESS_SECONDS[0] = args.process_seconds
    DEADLINE[0] = time.time() + args.seconds
    stage, out = os.path.abspath(args.stage), os.path.abspath(args.out)
    bridge = os.path.join(stage, "bridge")
    hf_home = "/tmp/mbl-hf"
    n_models = write_hub_cache(args.catalog, os.path.join(hf_home, "hub"), pinned_revisions(bridge))
    env = dict(os.environ)
    env.update({
        "PYTHONPATH": ":".join([HERE, os.path.join(stage, "pylibs"), os.path.join(bridge, "src"),
                                os.path.join(stage, "mcore"), os.path.join(bridge, "scripts/performance")]),
        "MBL_STANDINS": "1", "HF_HOME": hf_home, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
        "PYTHONDONTWRITEBYTECODE": "1", "WANDB_MODE": "disabled",
    })
    if args.hide_gpu:
        env["CUDA_VISIBLE_DEVICES"] = ""
    PRETRAINED[0] = os.path.join(out, "pretrained-checkpoint")
    os.makedirs(PRETRAINED[0], exist_ok=True)
    os.makedirs(os.path.join(out, "perf"), exist_ok=True)
    os.makedirs(os.path.join(out, "library"), exist_ok=True)
    only = re.compile(args.only) if args.only else None
    combos = [c for c in perf_combos(bridge) if not only or only.search(c["name"])]
    libraries = {m: [e for e in es if not only or only.search(e["name"])] for m, es in library_recipes(bridge).items()}
    libraries = {m: es for m, es in libraries.items() if es}
    results = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        families = {}
        for c in combos:
            families.setdefault(c["family"], []).append(c)
        futures = [pool.submit(run_perf, f, cs[i:i + PERF_PER_PROCESS], bridge, env, out)
                   for f, cs in families.items() for i in range(0, len(cs), PERF_PER_PROCESS)]
        by_family = {}
        for m, es in libraries.items():
            by_family.setdefault(m.split(".")[3], []).append((m, es))
        futures += [pool.submit(run_library_family, ms, bridge, env, out)
                    for family in by_family.values() for ms in split_modules(family)]
        for f in concurrent.futures.as_completed(futures):
            results += f.result()
    results.sort(key=lambda r: (r["kind"], r["name"]))
    versions = subprocess.run([sys.executable, "-c", "import torch, transformers, sys; "
                               "print(sys.version.split()[0], torch.__version__, transformers.__version__)"],
                              capture_output=True, text=True).stdout.strip()
    manifest = {"python torch transformers": versions, "hf_models": n_models, "results": results}
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    with tarfile.open(os.path.join(out, "dumps.tar.gz"), "w:gz") as tar:
        for kind in ("perf", "library"):
            tar.add(os.path.join(out, kind), arcname=kind)
    ok = sum(r["status"] == "ok" for r in results)
    print(f"{ok} of {len(results)} dumped ({versions})")
    for r in results:
        if r["status"] != "ok":
            print(f"  {r['kind']} {r['name']}: {str(r['status'])[-300:]}")


if __name__ == "__main__":
    main()
