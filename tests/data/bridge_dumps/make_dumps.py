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


def write_hub_cache(catalog_path, hub):
    """Each catalog model as hub/models--ORG--NAME/{refs/main,snapshots/HASH/config.json}."""
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


LIBRARY_RUNNER = r"""
import importlib, json, sys, traceback
out_dir, work = sys.argv[1], json.loads(sys.argv[2])
results = {}
for module, names in work:
    try:
        mod = importlib.import_module(module)
    except BaseException as e:
        for n in names:
            results[n] = "import: " + "".join(traceback.format_exception_only(type(e), e)).strip()[-600:]
        continue
    for n in names:
        try:
            getattr(mod, n)().to_yaml(f"{out_dir}/{n}.yaml")
            results[n] = "ok"
        except BaseException as e:
            results[n] = "".join(traceback.format_exception_only(type(e), e)).strip()[-600:]
print(json.dumps(results))
"""


DEADLINE = [float("inf")]  # no process starts after it, so that what was dumped is packed in time


# run_script.py's own main(), once for each launch, in one process a family (importing the stack once): the argv
# of `python scripts/performance/run_script.py ARGS`; its dry run ends with sys.exit(0) once the YAML is written.
PERF_RUNNER = r"""
import contextlib, io, json, os, sys, traceback
sys.path.insert(0, os.path.join(os.getcwd(), "scripts/performance"))
results = {}
try:
    import run_script
except BaseException as e:
    print(json.dumps({s["name"]: "import: " + "".join(traceback.format_exception_only(type(e), e)).strip()[-600:]
                      for s in json.loads(sys.argv[1])}))
    sys.exit(0)
for spec in json.loads(sys.argv[1]):
    for name in ("WORLD_SIZE", "RANK"):  # the dry run sets them from --num_gpus when they are absent
        os.environ.pop(name, None)
    sys.argv = ["scripts/performance/run_script.py", *spec["args"]]
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            run_script.main()
        results[spec["name"]] = "returned without the dry run's exit"
    except SystemExit as e:
        results[spec["name"]] = "ok" if e.code in (0, None) and os.path.exists(spec["path"]) else f"exit {e.code}"
    except BaseException as e:
        results[spec["name"]] = "".join(traceback.format_exception(type(e), e, e.__traceback__)).strip()[-800:]
print(json.dumps(results))
"""


def launcher_args(combo, path):
    return ["--model_family_name", combo["family"], "--model_recipe_name", combo["recipe"], "--task", combo["task"],
            "--num_gpus", combo["num_gpus"], "--gpu", combo["gpu"], "--compute_dtype", combo["precision"],
            "--dryrun", "--save_config_filepath", path]


def run_perf(family, combos, bridge, env, out):
    if time.time() > DEADLINE[0]:
        return [{**c, "command": "", "status": "not run: deadline", "seconds": 0} for c in combos]
    specs = [{"name": c["name"], "path": os.path.join(out, "perf", c["name"] + ".yaml"),
              "args": launcher_args(c, os.path.join(out, "perf", c["name"] + ".yaml"))} for c in combos]
    start = time.time()
    try:
        p = subprocess.run([sys.executable, "-c", PERF_RUNNER, json.dumps(specs)], cwd=bridge, env=env,
                           capture_output=True, text=True, timeout=100)
        lines = [line for line in p.stdout.splitlines() if line.startswith("{")]
        results = json.loads(lines[-1]) if lines else {s["name"]: (p.stderr or "no output").strip()[-800:]
                                                        for s in specs}
    except subprocess.TimeoutExpired:
        results = {s["name"]: "timed out after 100 s" for s in specs}
    took = round(time.time() - start, 1)
    return [{**c, "command": "python scripts/performance/run_script.py " + " ".join(s["args"][:-1]) + " OUT.yaml",
             "status": results.get(c["name"], "not reached"), "seconds": took} for c, s in zip(combos, specs)]


def run_library_family(modules, bridge, env, out):
    entries = [e for _, es in modules for e in es]
    if time.time() > DEADLINE[0]:
        return [{**e, "command": "", "status": "not run: deadline", "seconds": 0} for e in entries]
    work = [(m, [e["name"] for e in es]) for m, es in modules]
    start = time.time()
    try:
        p = subprocess.run([sys.executable, "-c", LIBRARY_RUNNER, os.path.join(out, "library"), json.dumps(work)],
                           cwd=bridge, env=env, capture_output=True, text=True, timeout=100)
        lines = [line for line in p.stdout.splitlines() if line.startswith("{")]
        results = json.loads(lines[-1]) if lines else {e["name"]: (p.stderr or "no output").strip()[-800:]
                                                        for e in entries}
    except subprocess.TimeoutExpired:
        results = {e["name"]: "timed out after 100 s" for e in entries}
    took = round(time.time() - start, 1)
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
    args = a.parse_args()
    DEADLINE[0] = time.time() + args.seconds
    stage, out = os.path.abspath(args.stage), os.path.abspath(args.out)
    bridge = os.path.join(stage, "bridge")
    hf_home = "/tmp/mbl-hf"
    n_models = write_hub_cache(args.catalog, os.path.join(hf_home, "hub"))
    env = dict(os.environ)
    env.update({
        "PYTHONPATH": ":".join([HERE, os.path.join(stage, "pylibs"), os.path.join(bridge, "src"),
                                os.path.join(stage, "mcore"), os.path.join(bridge, "scripts/performance")]),
        "MBL_STANDINS": "1", "HF_HOME": hf_home, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
        "CUDA_VISIBLE_DEVICES": "", "PYTHONDONTWRITEBYTECODE": "1", "WANDB_MODE": "disabled",
    })
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
        futures = [pool.submit(run_perf, f, cs, bridge, env, out) for f, cs in families.items()]
        by_family = {}
        for m, es in libraries.items():
            by_family.setdefault(m.split(".")[3], []).append((m, es))
        futures += [pool.submit(run_library_family, ms, bridge, env, out) for ms in by_family.values()]
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
