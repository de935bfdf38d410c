#!/usr/bin/env python3
"""Megatron Core's own verdicts on generated model configs (see README.md beside this file).

Given a Megatron-LM source tree (a folder holding megatron/core) and a revision name, this script generates model
configs that exercise every field the recompute-family checks of TransformerConfig.__post_init__ read (and their
neighbours: offloading, fp8, MoE, MLA, gated delta net, CUDA graphs, dropout, hyper-connections, parallel sizes),
constructs the REAL TransformerConfig (MLATransformerConfig when multi_latent_attention is true) with each one, in a
forked child process per config, and writes one JSON line per config:

    id, mcore, commit, model, verdict (ok|error), warnings,
    for errors: error_type, message (first 400 characters), raise_file, raise_line
                (the innermost traceback frame inside megatron/, path relative to the tree root; null if none),
    for ok rows: effective (the recompute fields after __post_init__, the CUDA-graph fields where the revision has
                 them, and every passed field whose value __post_init__ changed).

Generation uses only the standard library: the fields each class accepts and the recompute_modules / offload_modules
labels of the revision are read from the tree's source with `ast`, so `--dry-run` (no torch) writes exactly the
models that a real run constructs.  A real run imports torch and Megatron Core and checks that the fields read from
the source are the ones `dataclasses.fields` reports.

Rows:
  g-N     generated for this revision: a greedy pairwise covering array over the factors below, then seeded
          random combinations (deterministic for a given --seed and tree).
  others  --legacy FILE...: the `model` of every row of those files whose id does not start with "g-" (the
          hand-made sets of earlier versions of these files), deduplicated, kept only where the revision's class
          accepts every key, re-run through the real classes.

Usage:
  make_verdicts.py --tree DIR --rev NAME [--commit SHA] [--out FILE] [--legacy FILE...] [--count N] [--seed N]
                   [--jobs N] [--timeout S] [--dry-run] [--import-mode auto|full|bare]
"""

import argparse
import ast
import copy
import hashlib
import itertools
import json
import os
import random
import re
import sys

GENERATED_PREFIX = "g-"
MESSAGE_LIMIT = 400
WARNING_PATTERN = re.compile(r"recompute|offload|cuda[ _-]?graph|mhc|hyper.?connection", re.IGNORECASE)
DTYPE_NAMES = ("bfloat16", "float16", "float32")
RECOMPUTE_FIELDS = (
    "recompute_granularity",
    "recompute_method",
    "recompute_num_layers",
    "recompute_modules",
    "distribute_saved_activations",
)
CUDA_GRAPH_FIELDS = ("cuda_graph_modules", "cuda_graph_scope")

# Every recompute_modules label some revision knows; those a revision does not know test its invalid-label check.
KNOWN_RECOMPUTE_LABELS = (
    "core_attn",
    "moe_act",
    "layernorm",
    "mla_up_proj",
    "mlp",
    "moe",
    "shared_experts",
    "gdn_norm_out",
    "gdp_in_proj",
    "gdp_qkv",
    "gdn",
    "mhc",
)
KNOWN_OFFLOAD_LABELS = (
    "core_attn",
    "attn_proj",
    "expert_fc1",
    "fused_group_mlp",
    "moe_act",
    "attn_norm",
    "mlp_norm",
    "qkv_linear",
    "gdp_qkv",
)

BASE_MODEL = {
    "hidden_size": 1024,
    "num_attention_heads": 16,
    "ffn_hidden_size": 4096,
    "bf16": True,
    "params_dtype": "bfloat16",
    "tensor_model_parallel_size": 1,
    "pipeline_model_parallel_size": 1,
}
MLA_FIELDS = {"q_lora_rank": 256, "kv_lora_rank": 128, "qk_head_dim": 64, "qk_pos_emb_head_dim": 32, "v_head_dim": 64}
LINEAR_ATTENTION_FIELDS = {
    "linear_attention_freq": 4,
    "linear_conv_kernel_dim": 4,
    "linear_key_head_dim": 64,
    "linear_num_key_heads": 4,
    "linear_num_value_heads": 8,
    "linear_value_head_dim": 64,
}
MOE_BASE = {"moe_ffn_hidden_size": 1024, "moe_router_topk": 2, "add_bias_linear": False}


# ----------------------------------------------------------------------------------------------------------------
# What the revision's source says (no torch needed)


def _class_fields(tree, class_name):
    """(accepted init fields, base class names) of a dataclass defined at module level in an ast tree."""
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            fields = []
            for stmt in node.body:
                if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
                    continue
                annotation = ast.unparse(stmt.annotation)
                if annotation.startswith(("ClassVar", "typing.ClassVar", "InitVar", "dataclasses.InitVar")):
                    continue
                init = True
                if isinstance(stmt.value, ast.Call) and ast.unparse(stmt.value.func) in ("field", "dataclasses.field"):
                    for kw in stmt.value.keywords:
                        if kw.arg == "init" and isinstance(kw.value, ast.Constant) and kw.value.value is False:
                            init = False
                fields.append((stmt.target.id, init, annotation))
            return fields, [ast.unparse(b) for b in node.bases]
    return None, []


class SourceFacts:
    """Fields and labels of one revision, read from its source."""

    def __init__(self, tree_root):
        core = os.path.join(tree_root, "megatron", "core")
        tc_path = os.path.join(core, "transformer", "transformer_config.py")
        mpc_path = os.path.join(core, "model_parallel_config.py")
        with open(tc_path, encoding="utf-8") as f:
            self.tc_source = f.read()
        with open(mpc_path, encoding="utf-8") as f:
            mpc_source = f.read()
        tc_tree, mpc_tree = ast.parse(self.tc_source), ast.parse(mpc_source)
        mpc_fields, _ = _class_fields(mpc_tree, "ModelParallelConfig")
        tc_fields, _ = _class_fields(tc_tree, "TransformerConfig")
        mla_fields, _ = _class_fields(tc_tree, "MLATransformerConfig")
        if mpc_fields is None or tc_fields is None or mla_fields is None:
            raise SystemExit("cannot find ModelParallelConfig / TransformerConfig / MLATransformerConfig in " + core)
        self.annotations = {name: ann for name, _, ann in mpc_fields + tc_fields + mla_fields}

        def accepted(*groups):
            out = {}
            for group in groups:  # later classes override earlier ones, as dataclasses do
                for name, init, _ in group:
                    out[name] = init
            return {name for name, init in out.items() if init}

        self.tc_accepts = accepted(mpc_fields, tc_fields)
        self.mla_accepts = accepted(mpc_fields, tc_fields, mla_fields)

        self.recompute_labels, self.offload_labels = [], []
        for block in re.findall(r"allowed_modules\s*=\s*\{([^}]*)\}", self.tc_source):
            labels = re.findall(r"[\"']([A-Za-z0-9_]+)[\"']", block)
            if "attn_norm" in labels:
                self.offload_labels = self.offload_labels or labels
            elif "core_attn" in labels:
                self.recompute_labels = self.recompute_labels or labels

    def literal_values(self, field):
        return re.findall(r"[\"']([A-Za-z0-9_]+)[\"']", self.annotations.get(field, ""))


# ----------------------------------------------------------------------------------------------------------------
# Factors and combinations

ABSENT = {}


class Factor:
    def __init__(self, name, values, when=None):
        self.name = name
        self.values = values  # list of dicts of kwargs (symbolic ints allowed, see resolve())
        self.when = when  # None, or (factor name, predicate on that factor's value dict)


def _sym(text):
    return "@" + text


def build_factors(facts):
    accepts = facts.mla_accepts  # a value is usable when the broadest class takes its keys; rows pick the class

    def ok(value):
        return all(k in accepts for k in value)

    def factor(name, values, when=None):
        kept = []
        for v in values:
            if ok(v) and v not in kept:
                kept.append(v)
        return Factor(name, kept, when) if len(kept) > 1 or (kept and kept[0]) else None

    rec_labels = list(facts.recompute_labels) + [x for x in KNOWN_RECOMPUTE_LABELS if x not in facts.recompute_labels]
    off_labels = list(facts.offload_labels) + [x for x in KNOWN_OFFLOAD_LABELS if x not in facts.offload_labels]
    modules = [ABSENT, {"recompute_modules": None}, {"recompute_modules": []}]
    modules += [{"recompute_modules": [label]} for label in rec_labels + ["bogus"]]
    pairs = [
        ("core_attn", "mlp"),
        ("moe_act", "layernorm"),
        ("core_attn", "moe"),
        ("moe", "shared_experts"),
        ("mla_up_proj", "core_attn"),
        ("mhc", "mlp"),
        ("mhc", "moe_act"),
        ("mhc", "core_attn"),
        ("moe_act", "shared_experts"),
        ("layernorm", "mlp"),
        ("gdn_norm_out", "core_attn"),
        ("gdp_in_proj", "gdp_qkv"),
        ("gdn", "mlp"),
        ("moe", "mlp"),
    ]
    modules += [{"recompute_modules": list(p)} for p in pairs]

    mhc_field = next((f for f in ("enable_mhc_connections", "enable_hyper_connections") if f in accepts), None)
    gdn_values = [v for v in facts.literal_values("experimental_attention_variant") if v.startswith(("gdn", "gated"))]
    gdn_values = gdn_values or ["gated_delta_net"]

    offload = [ABSENT, {"fine_grained_activation_offloading": False, "offload_modules": ["core_attn"]}]
    offload += [{"fine_grained_activation_offloading": True, "offload_modules": [label]} for label in off_labels]
    offload += [
        {"fine_grained_activation_offloading": True, "offload_modules": ["core_attn", "attn_proj"]},
        {"fine_grained_activation_offloading": True, "offload_modules": ["expert_fc1", "moe_act"]},
        {"fine_grained_activation_offloading": True, "offload_modules": ["core_attn", "attn_norm"]},
        {"fine_grained_activation_offloading": True, "offload_modules": []},
    ]

    graph_lists = [
        ["attn"],
        ["mlp"],
        ["moe"],
        ["moe_router"],
        ["moe_router", "moe_preprocess"],
        ["attn", "mlp"],
        ["attn", "moe"],
        ["attn", "moe_router"],
        [],
    ]
    graph_select = [ABSENT, {"cuda_graph_scope": "full"}, {"cuda_graph_scope": "attn"}]
    graph_select += [{"cuda_graph_scope": "full_iteration"}]
    graph_select += [{"cuda_graph_scope": list(x)} for x in graph_lists]
    graph_select += [{"cuda_graph_modules": list(x)} for x in graph_lists]
    graph_select += [{"cuda_graph_modules": "attn"}, {"cuda_graph_modules": "full"}]

    is_moe = ("moe", lambda v: bool(v))
    factors = [
        factor("num_layers", [{"num_layers": n} for n in (4, 8, 16, 24)]),
        factor("pp", [{"pipeline_model_parallel_size": n} for n in (1, 2, 4)]),
        factor(
            "vpp",
            [ABSENT, {"virtual_pipeline_model_parallel_size": 2}],
            ("pp", lambda v: v.get("pipeline_model_parallel_size", 1) > 1),
        ),
        factor(
            "tp_sp",
            [
                {"tensor_model_parallel_size": 1},
                {"tensor_model_parallel_size": 2},
                {"tensor_model_parallel_size": 2, "sequence_parallel": False},
                {"tensor_model_parallel_size": 2, "sequence_parallel": True},
            ],
        ),
        factor("granularity", [{"recompute_granularity": g} for g in (None, "full", "selective", "bogus")]),
        factor("method", [{"recompute_method": m} for m in (None, "uniform", "block", "bogus")]),
        factor(
            "num_layers_recomputed",
            [{"recompute_num_layers": n} for n in (None, 1, 2, _sym("Lpp"), _sym("Lpp+1"), _sym("L"), _sym("L+1"), 0)],
        ),
        factor("modules", modules),
        factor("distribute", [ABSENT, {"distribute_saved_activations": True}, {"distribute_saved_activations": False}]),
        factor("moe_layer_recompute", [ABSENT, {"moe_layer_recompute": True}, {"moe_layer_recompute": False}]),
        factor(
            "cpu_offloading",
            [ABSENT, {"cpu_offloading": False}]
            + [
                {"cpu_offloading": True, "cpu_offloading_num_layers": n}
                for n in (0, 1, _sym("L-1"), _sym("L"))
            ],
        ),
        factor("fine_grained_offloading", offload),
        factor(
            "fp8",
            [
                ABSENT,
                {"fp8": "hybrid"},
                {"fp8": "hybrid", "fp8_recipe": "delayed"},
                {"fp8": "hybrid", "fp8_recipe": "tensorwise"},
                {"fp8": "e4m3", "fp8_recipe": "delayed"},
                {"fp8": "e4m3", "fp8_recipe": "mxfp8"},
                {"fp8": "e4m3", "fp8_recipe": "blockwise"},
            ],
        ),
        factor("moe", [ABSENT, dict(MOE_BASE, num_moe_experts=8), dict(MOE_BASE, num_moe_experts=4)]),
        factor("moe_grouped_gemm", [{"moe_grouped_gemm": True}, {"moe_grouped_gemm": False}], is_moe),
        factor(
            "moe_dispatch",
            [
                {"moe_token_dispatcher_type": "alltoall", "expert_model_parallel_size": 2},
                {"moe_token_dispatcher_type": "alltoall", "expert_model_parallel_size": 1},
                {"moe_token_dispatcher_type": "allgather", "expert_model_parallel_size": 1},
                {"moe_token_dispatcher_type": "allgather", "expert_model_parallel_size": 2},
            ],
            is_moe,
        ),
        factor(
            "moe_shared",
            [
                ABSENT,
                {"moe_shared_expert_intermediate_size": 1024, "moe_shared_expert_overlap": False},
                {"moe_shared_expert_intermediate_size": 1024, "moe_shared_expert_overlap": True},
            ],
            is_moe,
        ),
        factor("moe_jitter", [ABSENT, {"moe_input_jitter_eps": 0.01}], is_moe),
        factor(
            "ep_overlap",
            [ABSENT, {"overlap_moe_expert_parallel_comm": True}, {"overlap_moe_expert_parallel_comm": False}],
            is_moe,
        ),
        factor("mla", [ABSENT, {"multi_latent_attention": True}]),
        factor("attention_variant", [ABSENT] + [{"experimental_attention_variant": v} for v in gdn_values]),
        factor(
            "cuda_graph_impl",
            [ABSENT, {"cuda_graph_impl": "none"}, {"enable_cuda_graph": True}]
            + [{"cuda_graph_impl": v} for v in ("local", "transformer_engine", "full_iteration")],
        ),
        factor("cuda_graph_select", graph_select),
        factor(
            "dropout",
            [
                ABSENT,
                {"attention_dropout": 0.0, "hidden_dropout": 0.0},
                {"attention_dropout": 0.1, "hidden_dropout": 0.0},
                {"attention_dropout": 0.0, "hidden_dropout": 0.1},
                {"attention_dropout": 0.1, "hidden_dropout": 0.1},
            ],
        ),
        factor("mhc", [ABSENT] + ([{mhc_field: True}, {mhc_field: False}] if mhc_field else [])),
        factor("mhc_layers", [ABSENT] + [{"mhc_recompute_layer_num": n} for n in (1, 2, 0, -1)]),
        factor("fused_mhc", [ABSENT, {"use_fused_mhc": True}]),
    ]
    return [f for f in factors if f is not None]


# Values that make a config plausible: random rows prefer them for the recompute core.
def _core_profile(rng, facts):
    rec = [x for x in facts.recompute_labels if x not in ("mla_up_proj", "gdn", "mhc", "moe_act", "gdp_in_proj", "gdp_qkv")]
    roll = rng.random()
    if roll < 0.25:
        return {"granularity": {"recompute_granularity": None}, "method": {"recompute_method": None},
                "num_layers_recomputed": {"recompute_num_layers": None}}
    if roll < 0.55:
        return {
            "granularity": {"recompute_granularity": "full"},
            "method": {"recompute_method": rng.choice(["uniform", "block"])},
            "num_layers_recomputed": {"recompute_num_layers": rng.choice([1, 2, _sym("Lpp")])},
            "modules": ABSENT,
        }
    picked = rng.sample(rec, k=rng.choice([1, 1, 2])) if rec else []
    return {
        "granularity": {"recompute_granularity": "selective"},
        "method": {"recompute_method": None},
        "num_layers_recomputed": {"recompute_num_layers": None},
        "modules": {"recompute_modules": picked} if rng.random() < 0.85 else ABSENT,
    }


class Generator:
    def __init__(self, facts, seed):
        self.facts = facts
        self.rng = random.Random(seed)
        self.factors = build_factors(facts)
        self.index = {f.name: i for i, f in enumerate(self.factors)}

    def _active(self, assignment):
        """Indices of factors that take effect in an assignment (a list of value indices, None = unassigned)."""
        out = []
        for i, f in enumerate(self.factors):
            if assignment[i] is None:
                continue
            if f.when is not None:
                j = self.index.get(f.when[0])
                if j is None or assignment[j] is None or not f.when[1](self.factors[j].values[assignment[j]]):
                    continue
            out.append(i)
        return out

    def _pair_universe(self):
        universe = set()
        n = len(self.factors)
        for a in range(n):
            for b in range(a + 1, n):
                fa, fb = self.factors[a], self.factors[b]
                for i in range(len(fa.values)):
                    for j in range(len(fb.values)):
                        if not self._pair_possible(a, i, b, j):
                            continue
                        universe.add((a, i, b, j))
        return universe

    def _pair_possible(self, a, i, b, j):
        for x, y, yv in ((a, b, j), (b, a, i)):
            cond = self.factors[x].when
            if cond is not None and self.index.get(cond[0]) == y and not cond[1](self.factors[y].values[yv]):
                return False
        return True

    def _pairs_of(self, assignment):
        active = self._active(assignment)
        return {(a, assignment[a], b, assignment[b]) for a, b in itertools.combinations(active, 2)}

    def _enable(self, assignment, f_index):
        """Set the factor a conditional factor depends on to a value that enables it."""
        cond = self.factors[f_index].when
        if cond is None:
            return
        j = self.index[cond[0]]
        if assignment[j] is not None and cond[1](self.factors[j].values[assignment[j]]):
            return
        choices = [k for k, v in enumerate(self.factors[j].values) if cond[1](v)]
        assignment[j] = self.rng.choice(choices)

    def pairwise(self, cap):
        uncovered = self._pair_universe()
        universe_size = len(uncovered)
        rows = []
        n = len(self.factors)
        while uncovered and len(rows) < cap:
            best, best_gain = None, -1
            seeds = self.rng.sample(sorted(uncovered), k=min(8, len(uncovered)))
            for a, i, b, j in seeds:
                assignment = [None] * n
                assignment[a], assignment[b] = i, j
                self._enable(assignment, a)
                self._enable(assignment, b)
                order = [k for k in range(n) if assignment[k] is None]
                self.rng.shuffle(order)
                # condition factors first, so that conditional ones know whether they act
                order.sort(key=lambda k: self.factors[k].when is not None)
                for k in order:
                    if assignment[k] is not None:
                        continue
                    scores = []
                    for v in range(len(self.factors[k].values)):
                        assignment[k] = v
                        gain = sum(1 for p in self._pairs_of_one(assignment, k) if p in uncovered)
                        scores.append((gain, self.rng.random(), v))
                    assignment[k] = max(scores)[2]
                gain = len(self._pairs_of(assignment) & uncovered)
                if gain > best_gain:
                    best, best_gain = assignment, gain
            if best_gain <= 0:
                break
            uncovered -= self._pairs_of(best)
            rows.append(best)
        return rows, universe_size, len(uncovered)

    def _pairs_of_one(self, assignment, k):
        active = self._active(assignment)
        if k not in active:
            return []
        out = []
        for other in active:
            if other == k:
                continue
            a, b = (k, other) if k < other else (other, k)
            out.append((a, assignment[a], b, assignment[b]))
        return out

    def random_rows(self, count):
        rows = []
        n = len(self.factors)
        for _ in range(count):
            assignment = [0] * n  # index 0 is each factor's default (ABSENT where there is one)
            core_factors = ("granularity", "method", "num_layers_recomputed", "modules")
            if self.rng.random() < 0.6:
                profile = _core_profile(self.rng, self.facts)
                for name, value in profile.items():
                    k = self.index.get(name)
                    if k is not None and value in self.factors[k].values:
                        assignment[k] = self.factors[k].values.index(value)
                    elif k is not None and name == "modules":
                        self.factors[k].values.append(value)  # a label set not in the pairwise list
                        assignment[k] = len(self.factors[k].values) - 1
            else:
                for name in core_factors:
                    k = self.index.get(name)
                    if k is not None:
                        assignment[k] = self.rng.randrange(len(self.factors[k].values))
            for k, f in enumerate(self.factors):
                if f.name in core_factors:
                    continue
                if f.name in ("num_layers", "pp", "tp_sp"):
                    assignment[k] = self.rng.randrange(len(f.values))
                elif self.rng.random() < 0.22:
                    assignment[k] = self.rng.randrange(len(f.values))
            rows.append(assignment)
        return rows

    def model(self, assignment):
        model = dict(BASE_MODEL)
        for k in self._active(assignment):
            model.update(copy.deepcopy(self.factors[k].values[assignment[k]]))
        return finish_model(model, self.facts)


# Targeted scenarios: checks that read four or more fields at once, which pairwise and random rows seldom reach
# without an earlier check stopping them.  Each is a fixed part and a few varied parts; all their combinations.
def scenarios(facts):
    accepts = facts.mla_accepts
    moe = dict(MOE_BASE, num_moe_experts=8, moe_grouped_gemm=True, moe_token_dispatcher_type="alltoall",
               expert_model_parallel_size=2)
    no_dropout = {"attention_dropout": 0.0, "hidden_dropout": 0.0}
    mhc_field = next((f for f in ("enable_mhc_connections", "enable_hyper_connections") if f in accepts), None)
    gdn_values = [v for v in facts.literal_values("experimental_attention_variant") if v.startswith(("gdn", "gated"))]
    modules_field = "cuda_graph_modules" if "cuda_graph_modules" in accepts else "cuda_graph_scope"

    def graphs(*lists):
        return [{modules_field: list(x)} for x in lists]

    def sel(*lists):
        return [{"recompute_modules": list(x)} for x in lists]

    selective = {"recompute_granularity": "selective"}
    full = {"recompute_granularity": "full", "recompute_method": "uniform", "recompute_num_layers": 1}
    table = [
        # moe recompute inside a moe_router CUDA graph (transformer_engine)
        (dict(moe, **selective, **no_dropout, num_layers=8), [
            [{"cuda_graph_impl": "transformer_engine"}, {"cuda_graph_impl": "local"}],
            graphs(["moe_router"], ["moe_router", "moe_preprocess"], ["attn"]) + [{"cuda_graph_scope": ["moe_router"]}],
            sel(["moe"], ["core_attn"], ["moe", "core_attn"]),
            [ABSENT, {"moe_layer_recompute": True}],
        ]),
        # moe_input_jitter_eps with graphed moe recompute
        (dict(moe, **selective, **no_dropout, num_layers=8, moe_input_jitter_eps=0.01), [
            [{"cuda_graph_impl": v} for v in ("local", "transformer_engine", "full_iteration")],
            [ABSENT] + graphs([], ["moe"], ["attn"], ["moe_router"]),
            sel(["moe"], ["core_attn"]),
            [ABSENT, {"moe_expert_capacity_factor": 1.0, "moe_pad_expert_input_to_capacity": True}],
        ]),
        # dropout with graphed attention / MLP / MoE recompute
        (dict(selective, num_layers=8), [
            [ABSENT, moe],
            [{"cuda_graph_impl": v} for v in ("local", "transformer_engine", "full_iteration")],
            [ABSENT] + graphs([], ["attn"], ["mlp"]),
            [{"attention_dropout": 0.1, "hidden_dropout": 0.0}, {"attention_dropout": 0.0, "hidden_dropout": 0.1},
             no_dropout],
            sel(["core_attn"], ["mlp"], ["moe"]),
        ]),
        # shared_experts recompute with the shared-expert overlap
        (dict(moe, **selective, num_layers=8, moe_shared_expert_intermediate_size=1024), [
            [{"moe_shared_expert_overlap": True}, {"moe_shared_expert_overlap": False}],
            sel(["shared_experts"], ["shared_experts", "core_attn"], ["core_attn"]),
            [ABSENT, {"moe_token_dispatcher_type": "allgather", "expert_model_parallel_size": 1}],
            [ABSENT, {"fp8": "hybrid", "fp8_recipe": "delayed"}],
        ]),
        # full recompute (and its method / layer count) under the expert-parallel overlap
        (dict(moe, num_layers=8, overlap_moe_expert_parallel_comm=True), [
            [{"recompute_granularity": "full", "recompute_method": None, "recompute_num_layers": None},
             full,
             {"recompute_granularity": "full", "recompute_method": None, "recompute_num_layers": 1},
             {"recompute_granularity": "selective", "recompute_method": None, "recompute_num_layers": None},
             {"recompute_granularity": None, "recompute_method": None, "recompute_num_layers": None}],
            [ABSENT] + sel(["moe"], ["core_attn"]),
            [ABSENT, no_dropout],
            [ABSENT, {"cuda_graph_impl": "local"}],
            [ABSENT, {"fp8": "hybrid", "fp8_recipe": "delayed"}, {"fp8": "hybrid", "fp8_recipe": "tensorwise"}],
        ]),
    ]
    if mhc_field:
        table.append((dict(num_layers=8, **{mhc_field: True}), [
            sel(["mhc"], ["mhc", "mlp"], ["mhc", "core_attn"], ["core_attn"]),
            [ABSENT, {"mhc_recompute_layer_num": 0}],
            [selective, full],
            [ABSENT, {"fine_grained_activation_offloading": True, "offload_modules": ["core_attn"]},
             {"fine_grained_activation_offloading": True, "offload_modules": ["attn_norm"]}],
            [ABSENT, dict(moe, overlap_moe_expert_parallel_comm=True, **no_dropout),
             dict(moe, overlap_moe_expert_parallel_comm=True, cuda_graph_impl="local", **no_dropout)],
        ]))
    if "gdp_qkv" in facts.offload_labels:
        table.append((dict(selective, num_layers=8, fine_grained_activation_offloading=True), [
            [{"offload_modules": ["gdp_qkv"]}, {"offload_modules": ["core_attn"]},
             {"offload_modules": ["gdp_qkv", "core_attn"]}],
            sel(["gdp_in_proj"], ["gdp_qkv"], ["gdp_in_proj", "gdp_qkv"], ["core_attn"]),
            [ABSENT] + [{"experimental_attention_variant": v} for v in gdn_values],
        ]))
    out = []
    for fixed, varied in table:
        for combo in itertools.product(*varied):
            model = dict(BASE_MODEL)
            model.update(copy.deepcopy(fixed))
            for part in combo:
                model.update(copy.deepcopy(part))
            model = finish_model(model, facts)
            if accepted_by(model, facts):
                out.append(model)
    return out


def resolve(value, model):
    if not (isinstance(value, str) and value.startswith("@")):
        return value
    layers = model["num_layers"]
    per_rank = layers // max(1, model.get("pipeline_model_parallel_size", 1))
    return {"L": layers, "L+1": layers + 1, "L-1": layers - 1, "Lpp": per_rank, "Lpp+1": per_rank + 1}[value[1:]]


def finish_model(model, facts):
    """Resolve symbolic values and add what keeps the untested parts of the model valid."""
    for key in list(model):
        model[key] = resolve(model[key], model)
    if model.get("pipeline_model_parallel_size", 1) > 1:
        model["pipeline_dtype"] = "bfloat16"
    if model.get("multi_latent_attention") is True:
        model.update(MLA_FIELDS)
    if model.get("experimental_attention_variant"):
        model.update({k: v for k, v in LINEAR_ATTENTION_FIELDS.items() if k in facts.tc_accepts})
    return dict(sorted(model.items()))


def accepted_by(model, facts):
    accepts = facts.mla_accepts if model.get("multi_latent_attention") is True else facts.tc_accepts
    return all(k in accepts for k in model)


def canonical(model):
    return json.dumps(model, sort_keys=True)


def generate(facts, count, seed, legacy_files):
    gen = Generator(facts, seed)
    pair_rows, universe, left = gen.pairwise(cap=count)
    rows = pair_rows + gen.random_rows(max(0, count - len(pair_rows)))
    targeted = scenarios(facts)
    out, seen = [], set()
    for model in [gen.model(assignment) for assignment in rows] + targeted:
        key = canonical(model)
        if key in seen or not accepted_by(model, facts):
            continue
        seen.add(key)
        out.append((GENERATED_PREFIX + str(len(out)), model))
    stats = {
        "factors": len(gen.factors),
        "pairs": universe,
        "pairs_uncovered": left,
        "pairwise_rows": len(pair_rows),
        "scenario_rows": len(targeted),
        "generated": len(out),
    }
    legacy, skipped = [], 0
    ids = {i for i, _ in out}
    for path in legacy_files:
        with open(path, encoding="utf-8") as f:
            for line in f:
                row = json.loads(line)
                if row["id"].startswith(GENERATED_PREFIX):
                    continue
                model = row["model"]
                key = canonical(model)
                if key in seen:
                    continue
                if not accepted_by(model, facts):
                    skipped += 1
                    continue
                seen.add(key)
                rid = row["id"]
                if rid in ids:  # the same id with another model in another file: name it after its model
                    rid += "~" + hashlib.sha1(key.encode()).hexdigest()[:8]
                ids.add(rid)
                legacy.append((rid, dict(sorted(model.items()))))
    legacy.sort(key=lambda item: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", item[0])])
    stats["legacy"] = len(legacy)
    stats["legacy_skipped_unaccepted_keys"] = skipped
    return out + legacy, stats


# ----------------------------------------------------------------------------------------------------------------
# Constructing the real classes (torch needed from here on)


def _install_stub_finder(stubbed):
    import importlib.abc
    import importlib.machinery
    import types

    class _Dummy:
        def __init__(self, *args, **kwargs):
            pass

        def __call__(self, *args, **kwargs):
            if len(args) == 1 and callable(args[0]) and not kwargs:
                return args[0]
            return _Dummy()

        def __getattr__(self, name):
            if name.startswith("__"):
                raise AttributeError(name)
            return _Dummy()

    class _StubModule(types.ModuleType):
        def __getattr__(self, name):
            if name.startswith("__"):
                raise AttributeError(name)
            return type(name, (_Dummy,), {})

    class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        def find_spec(self, fullname, path, target=None):
            if fullname.split(".")[0] in stubbed:
                return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
            return None

        def create_module(self, spec):
            module = _StubModule(spec.name)
            module.__path__ = []
            return module

        def exec_module(self, module):
            pass

    sys.meta_path.insert(0, _Finder())


def import_config(tree_root, mode):
    """Import TransformerConfig and MLATransformerConfig from the tree; returns (tc, mla, notes)."""
    import types

    sys.path.insert(0, tree_root)
    notes = []
    stubbed = set()

    def purge():
        for name in list(sys.modules):
            if name == "megatron" or name.startswith("megatron."):
                del sys.modules[name]

    def bare():
        purge()
        for name in ("megatron", "megatron.core"):
            module = types.ModuleType(name)
            module.__path__ = [os.path.join(tree_root, *name.split("."))]
            sys.modules[name] = module

    if mode == "bare":
        bare()
        notes.append("bare packages: megatron/__init__.py and megatron/core/__init__.py not executed")
    finder_installed = False
    for _ in range(30):
        try:
            from megatron.core.transformer import transformer_config as tc_module

            break
        except ModuleNotFoundError as e:
            top = (e.name or "").split(".")[0]
            if not top or top in ("megatron", "torch") or top in stubbed:
                if mode == "auto":
                    mode = "bare"
                    bare()
                    notes.append(f"full import failed ({e!r}); bare packages used")
                    continue
                raise
            stubbed.add(top)
            if not finder_installed:
                _install_stub_finder(stubbed)
                finder_installed = True
            notes.append(f"stubbed missing module {top!r} (imported without a guard: {e!r})")
            purge()
            if mode == "bare":
                bare()
        except ImportError as e:
            if mode == "auto":
                mode = "bare"
                bare()
                notes.append(f"full import failed ({e!r}); bare packages used")
                continue
            raise
    else:
        raise SystemExit("could not import transformer_config: " + "; ".join(notes))
    return tc_module.TransformerConfig, tc_module.MLATransformerConfig, notes


def jsonable(value):
    import enum

    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else repr(value)
    if isinstance(value, enum.Enum):
        return value.name
    if type(value).__name__ == "dtype" and type(value).__module__ == "torch":
        return str(value).replace("torch.", "")
    if isinstance(value, (list, tuple)):
        return [jsonable(x) for x in value]
    if isinstance(value, (set, frozenset)):
        return sorted((jsonable(x) for x in value), key=repr)
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    return repr(value)


def to_kwargs(model):
    import torch

    kwargs = copy.deepcopy(model)
    for key, value in kwargs.items():
        if key.endswith("_dtype") and value in DTYPE_NAMES:
            kwargs[key] = getattr(torch, value)
    return kwargs


def construct(classes, model, tree_root):
    """Build the config in this (forked) process; returns the verdict fields of the row."""
    import logging
    import traceback
    import warnings

    tc, mla = classes
    kwargs = to_kwargs(model)
    passed = {k: jsonable(v) for k, v in kwargs.items()}
    cls = mla if model.get("multi_latent_attention") is True else tc

    logged = []

    class _Handler(logging.Handler):
        def emit(self, record):
            try:
                logged.append(record.getMessage())
            except Exception:  # a bad format string must not turn into a verdict
                logged.append(str(record.msg))

    root = logging.getLogger()
    root.handlers[:] = [_Handler(level=logging.WARNING)]
    root.setLevel(logging.WARNING)
    result = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            config = cls(**kwargs)
        except BaseException as e:  # noqa: BLE001 - every exception is a verdict
            megatron_dir = os.path.join(os.path.realpath(tree_root), "megatron") + os.sep
            raise_file = raise_line = None
            for frame in reversed(traceback.extract_tb(e.__traceback__)):
                path = os.path.realpath(frame.filename)
                if path.startswith(megatron_dir):
                    raise_file = os.path.relpath(path, os.path.realpath(tree_root))
                    raise_line = frame.lineno
                    break
            result.update(
                verdict="error",
                error_type=type(e).__name__,
                message=str(e)[:MESSAGE_LIMIT],
                raise_file=raise_file,
                raise_line=raise_line,
            )
        else:
            effective = {}
            for key in RECOMPUTE_FIELDS + CUDA_GRAPH_FIELDS:
                if hasattr(config, key):
                    effective[key] = jsonable(getattr(config, key))
            for key, before in passed.items():
                after = jsonable(getattr(config, key, None))
                if after != before:
                    effective[key] = after
            result.update(verdict="ok", effective=dict(sorted(effective.items())))
    messages = [str(w.message) for w in caught] + logged
    kept = []
    for message in messages:
        message = message[:MESSAGE_LIMIT]
        if WARNING_PATTERN.search(message) and message not in kept:
            kept.append(message)
    result["warnings"] = kept
    return result


def run_rows(classes, rows, tree_root, jobs, timeout):
    """Construct each row's config in its own forked child; returns the verdict dicts in row order."""
    import select
    import signal
    import time

    results = [None] * len(rows)
    pending = list(range(len(rows)))
    pending.reverse()
    inflight = {}  # fd -> [index, pid, chunks, started]
    devnull = os.open(os.devnull, os.O_WRONLY)
    done = 0
    while pending or inflight:
        while pending and len(inflight) < jobs:
            index = pending.pop()
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:  # child
                try:
                    os.close(r)
                    os.dup2(devnull, 1)
                    signal.alarm(int(timeout))
                    try:
                        out = construct(classes, rows[index][1], tree_root)
                    except BaseException as e:  # noqa: BLE001
                        out = {"verdict": "harness-error", "message": repr(e)[:MESSAGE_LIMIT]}
                    data = json.dumps(out).encode()
                    view = memoryview(data)
                    while view:
                        n = os.write(w, view)
                        view = view[n:]
                    os.close(w)
                finally:
                    os._exit(0)
            os.close(w)
            inflight[r] = [index, pid, [], time.monotonic()]
        ready, _, _ = select.select(list(inflight), [], [], 0.5)
        for fd in ready:
            chunk = os.read(fd, 1 << 16)
            if chunk:
                inflight[fd][2].append(chunk)
                continue
            index, pid, chunks, _ = inflight.pop(fd)
            os.close(fd)
            _, status = os.waitpid(pid, 0)
            data = b"".join(chunks)
            if data:
                results[index] = json.loads(data)
            else:
                results[index] = {
                    "verdict": "error",
                    "error_type": "Timeout" if os.WIFSIGNALED(status) else "ChildDied",
                    "message": f"construction did not finish (child status {status}, limit {timeout} s)",
                    "raise_file": None,
                    "raise_line": None,
                    "warnings": [],
                }
            done += 1
            if done % 500 == 0:
                print(f"  {done}/{len(rows)}", file=sys.stderr, flush=True)
        now = time.monotonic()
        for fd, (index, pid, chunks, started) in list(inflight.items()):
            if now - started > timeout + 5:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
    os.close(devnull)
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree", required=True, help="Megatron-LM source tree (a folder holding megatron/core)")
    parser.add_argument("--rev", required=True, help="revision name written in each row's mcore field")
    parser.add_argument("--commit", help="commit written in each row (default: the file COMMIT in --tree)")
    parser.add_argument("--out", help="jsonl file to write (default: stdout)")
    parser.add_argument("--legacy", nargs="*", default=[], help="earlier jsonl files whose non-generated models to re-run")
    parser.add_argument("--count", type=int, default=1800, help="pairwise + random rows, before deduplication")
    parser.add_argument("--seed", type=int, default=20260822)
    parser.add_argument("--jobs", type=int, default=2, help="children constructing configs at once")
    parser.add_argument("--timeout", type=float, default=8.0, help="seconds one construction may take")
    parser.add_argument("--import-mode", choices=("auto", "full", "bare"), default="auto")
    parser.add_argument("--dry-run", action="store_true", help="generate only (no torch): write the models, no verdicts")
    args = parser.parse_args()

    # Megatron formats sets into messages ("Invalid choices for recompute_modules: {...}"): fix their order.
    if os.environ.get("PYTHONHASHSEED") != "0":
        os.environ["PYTHONHASHSEED"] = "0"
        os.execv(sys.executable, [sys.executable] + sys.argv)

    tree_root = os.path.abspath(args.tree)
    commit = args.commit
    if commit is None:
        commit_file = os.path.join(tree_root, "COMMIT")
        commit = open(commit_file, encoding="utf-8").read().strip() if os.path.exists(commit_file) else None
    facts = SourceFacts(tree_root)
    # the legacy files may be the output being rewritten: read them all before anything is written
    rows, stats = generate(facts, args.count, args.seed, args.legacy)
    print(f"{args.rev}: {json.dumps(stats)}", file=sys.stderr, flush=True)
    print(f"{args.rev}: recompute labels {facts.recompute_labels}, offload labels {facts.offload_labels}",
          file=sys.stderr, flush=True)

    results = None
    if not args.dry_run:
        import dataclasses

        tc, mla, notes = import_config(tree_root, args.import_mode)
        for note in notes:
            print(f"{args.rev}: {note}", file=sys.stderr, flush=True)
        for cls, from_source in ((tc, facts.tc_accepts), (mla, facts.mla_accepts)):
            real = {f.name for f in dataclasses.fields(cls) if f.init}
            if real != from_source:
                print(
                    f"{args.rev}: {cls.__name__} fields differ from the source reading: "
                    f"only real {sorted(real - from_source)}, only source {sorted(from_source - real)}",
                    file=sys.stderr,
                    flush=True,
                )
        results = run_rows((tc, mla), rows, tree_root, args.jobs, args.timeout)

    out = open(args.out, "w", encoding="utf-8") if args.out else sys.stdout
    counts = {}
    for i, (rid, model) in enumerate(rows):
        row = {"id": rid, "mcore": args.rev, "commit": commit, "model": model}
        if results is not None:
            row.update(results[i])
            counts[row["verdict"]] = counts.get(row["verdict"], 0) + 1
        out.write(json.dumps(row, sort_keys=True) + "\n")
    if args.out:
        out.close()
    print(f"{args.rev}: {len(rows)} rows {json.dumps(counts, sort_keys=True)}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
