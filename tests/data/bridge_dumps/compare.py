#!/usr/bin/env python3
"""The linter's effective config against Megatron Bridge's own saved config, field by field (issue 34, item 6).

  compare.py BRIDGE_CHECKOUT --binary build/mbridge-lint [--dumps DIR] [--mcore 0.20.dev] [--min-agree N] [--json F]

For every dump make_dumps.py recorded (DIR/manifest.json, DIR/dumps.tar.gz; default: this folder), runs
`mbridge-lint show FILE::RECIPE` in the checkout (Bridge at the commit the dumps were made from) and compares the
recompute, parallelism and batch fields. Each field is `agree` (a None the saved config holds agrees with the value
the linter shows as Megatron Core's `__post_init__` rewrite of it: the launch saves before that runs), `differ` (the linter states a value the launch does
not build: a wrong answer) or `unknown` (the linter says it does not know: never wrong). A recipe agrees when every
field agrees. Exit 1 when any field differs or fewer than N recipes agree, so that the ctest registered with
-DMBRIDGE_LINT_BRIDGE_CHECKOUT=PATH guards the figure the README states.
"""
import argparse
import concurrent.futures
import io
import json
import os
import subprocess
import sys
import tarfile

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
FIELDS = {
    "recompute": ["model.recompute_granularity", "model.recompute_method", "model.recompute_num_layers",
                  "model.recompute_modules", "model.distribute_saved_activations"],
    "parallelism": ["model.tensor_model_parallel_size", "model.pipeline_model_parallel_size",
                    "model.virtual_pipeline_model_parallel_size", "model.context_parallel_size",
                    "model.expert_model_parallel_size", "model.expert_tensor_parallel_size",
                    "model.sequence_parallel"],
    "batch": ["train.global_batch_size", "train.micro_batch_size", "model.seq_length"],
}


class Unknown:
    def __init__(self, reason):
        self.reason = reason


class ShowLoader(yaml.SafeLoader):
    pass


ShowLoader.add_constructor("!unknown", lambda loader, node: Unknown(loader.construct_scalar(node)))


class DumpLoader(yaml.SafeLoader):
    pass


# Bridge's to_yaml writes `_target_` objects and Python enums with tags of their own: any tag reads as its value.
DumpLoader.add_multi_constructor("", lambda loader, suffix, node: (
    loader.construct_mapping(node, deep=True) if isinstance(node, yaml.MappingNode) else
    loader.construct_sequence(node, deep=True) if isinstance(node, yaml.SequenceNode) else
    loader.construct_scalar(node)))

MISSING = object()


def lookup(config, dotted):
    """The field in a config tree; model fields may sit under `model.transformer` (builder-style providers)."""
    section, field = dotted.split(".", 1)
    node = config.get(section) if isinstance(config, dict) else None
    if not isinstance(node, dict):
        return MISSING
    if field in node:
        return node[field]
    nested = node.get("transformer")
    if isinstance(nested, dict) and field in nested:
        return nested[field]
    return MISSING


def same(linter, launch):
    if isinstance(linter, list) and isinstance(launch, list):
        return [str(x) for x in linter] == [str(x) for x in launch]
    if isinstance(linter, bool) or isinstance(launch, bool):
        return linter is launch or linter == launch
    if isinstance(linter, (int, float)) and isinstance(launch, (int, float)):
        return float(linter) == float(launch)
    return str(linter) == str(launch) if linter is not None and launch is not None else linter is launch


def rewritten_fields(text):
    """The `section.field`s whose shown value is Megatron Core's rewrite of a None the config holds (`# Megatron Core
    X rewrites None to this`): the launch saves the None before __post_init__ runs, the job runs with the rewrite."""
    out, section = set(), None
    for line in text.splitlines():
        if line and not line.startswith((" ", "#")):
            section = line.split(":", 1)[0]
        elif line.startswith("  ") and not line.startswith("   ") and "rewrites None to this" in line:
            out.add(f"{section}.{line.strip().split(':', 1)[0]}")
    return out


def show(binary, checkout, file, recipe, mcore):
    p = subprocess.run([binary, "show", f"{file}::{recipe}", "--mcore", mcore], cwd=checkout, capture_output=True,
                       text=True)
    if p.returncode != 0:
        return None, set(), p.stderr.strip()[-300:]
    return yaml.load(p.stdout, Loader=ShowLoader), rewritten_fields(p.stdout), ""


def compare_one(entry, dump, binary, checkout, mcore):
    linter, rewritten, error = show(binary, checkout, entry["file"], entry["name"], mcore)
    row = {"kind": entry["kind"], "recipe": entry["name"], "file": entry["file"], "fields": {}}
    if linter is None:
        row["error"] = error
        return row
    for group, fields in FIELDS.items():
        for f in fields:
            want, got = lookup(dump, f), lookup(linter, f)
            if want is MISSING:
                continue  # the launch's config has no such field (another config class): nothing to compare
            if got is MISSING or isinstance(got, Unknown):
                verdict = "unknown"
            elif want is None and f in rewritten:
                verdict = "agree"  # None in the saved config, Megatron Core's rewrite of it in the linter's
            else:
                verdict = "agree" if same(got, want) else "differ"
            row["fields"][f] = {"group": group, "verdict": verdict, "launch": want,
                                "linter": got.reason if isinstance(got, Unknown) else
                                (None if got is MISSING else got)}
    return row


def main():
    a = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    a.add_argument("checkout")
    a.add_argument("--binary", required=True)
    a.add_argument("--dumps", default=HERE)
    a.add_argument("--mcore", default="0.20.dev")
    a.add_argument("--min-agree", type=int, default=0)
    a.add_argument("--json")
    a.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = a.parse_args()
    with open(os.path.join(args.dumps, "manifest.json"), encoding="utf-8") as f:
        manifest = json.load(f)
    dumps = {}
    with tarfile.open(os.path.join(args.dumps, "dumps.tar.gz")) as tar:
        for member in tar.getmembers():
            if member.isfile() and member.name.endswith(".yaml"):
                kind, name = member.name.split("/", 1)
                dumps[(kind, name[:-5])] = yaml.load(io.TextIOWrapper(tar.extractfile(member), encoding="utf-8"),
                                                     Loader=DumpLoader)
    entries = [e for e in manifest["results"] if e["status"] == "ok" and (e["kind"], e["name"]) in dumps]
    binary = os.path.abspath(args.binary)
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        rows = list(pool.map(lambda e: compare_one(e, dumps[(e["kind"], e["name"])], binary, args.checkout,
                                                   args.mcore), entries))
    report(rows, args.min_agree, args.json)


def report(rows, min_agree, json_path):
    counts = {}
    agreeing = 0
    differing = []
    for r in rows:
        verdicts = [v["verdict"] for v in r["fields"].values()]
        if "error" not in r and verdicts and all(v == "agree" for v in verdicts):
            agreeing += 1
        for f, v in r["fields"].items():
            counts.setdefault(v["group"], {"agree": 0, "differ": 0, "unknown": 0})[v["verdict"]] += 1
            if v["verdict"] == "differ":
                differing.append((r["recipe"], f, v["linter"], v["launch"]))
    errors = [r for r in rows if "error" in r]
    print(f"{len(rows)} recipes compared ({sum(r['kind'] == 'perf' for r in rows)} performance launches, "
          f"{sum(r['kind'] == 'library' for r in rows)} library recipes); {agreeing} agree on every recompute, "
          f"parallelism and batch field; {len(errors)} the linter could not show")
    for group, c in counts.items():
        print(f"  {group:<12} fields: {c['agree']} agree, {c['differ']} differ, {c['unknown']} unknown to the linter")
    for recipe, f, linter, launch in differing:
        print(f"  differ: {recipe} {f}: linter {linter!r}, launch {launch!r}")
    for r in errors:
        print(f"  not shown: {r['recipe']}: {r['error']}")
    if json_path:
        with open(json_path, "w", encoding="utf-8") as f:
            json.dump(rows, f, indent=1, default=str)
    sys.exit(1 if differing or agreeing < min_agree else 0)


if __name__ == "__main__":
    main()
