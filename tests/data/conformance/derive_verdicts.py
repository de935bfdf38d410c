#!/usr/bin/env python3
"""Derives Megatron Core's verdicts for the `dev` revision from its source, where the code itself cannot run.

The rows of mcore-0.20.dev.jsonl and mcore-main.jsonl are Megatron Core's own verdicts (PyTorch 2.11, no Transformer
Engine). For `dev` (Megatron-LM b3b1e2d793c5, the revision Megatron Bridge pins in .dev.commit) there is no
PyTorch here, so this script replays TransformerConfig.__post_init__ check by check, in the source's order, for the
checks a generated model config can reach, and names the check that decides each row (`check`: the line of
megatron/core/transformer/transformer_config.py at that commit, and what it tests).

The same replay runs at 0.20.dev and main (the few checks that differ are switched by revision), and
`derive_verdicts.py check` requires it to give Megatron Core's real verdict and message on every one of their 3,000
rows: that is what makes the derived `dev` rows credible. The conditions are written here from reading the source;
none of Megatron-LM's code is copied.

    derive_verdicts.py check    # replay the recorded rows of 0.20.dev and main; exit 1 on any disagreement
    derive_verdicts.py write    # (re)write mcore-dev.jsonl: the 1,500 models of the recorded files plus dev cases
"""
import json
import os
import random
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

COMMITS = {"0.20.dev": "2a75ac12c54b", "main": "d98e8a64ddf3", "dev": "b3b1e2d793c5"}

# TransformerConfig / ModelParallelConfig defaults of the fields the replayed checks read (identical at the three
# commits, except that each has its own hyper-connection switch).
DEFAULTS = {
    "recompute_granularity": None, "recompute_method": None, "recompute_num_layers": None, "recompute_modules": None,
    "distribute_saved_activations": False, "moe_layer_recompute": False, "cpu_offloading": False,
    "cpu_offloading_num_layers": 0, "sequence_parallel": False, "pipeline_model_parallel_size": 1,
    "virtual_pipeline_model_parallel_size": None, "expert_model_parallel_size": 1, "num_moe_experts": None,
    "moe_grouped_gemm": False, "multi_latent_attention": False, "experimental_attention_variant": None,
    "moe_shared_expert_intermediate_size": None, "moe_shared_expert_overlap": False, "fp8": None,
    "fp8_recipe": "delayed", "mhc_recompute_layer_num": None, "fine_grained_activation_offloading": False,
    "offload_modules": [], "overlap_moe_expert_parallel_comm": False, "cuda_graph_impl": "none",
    "cuda_graph_scope": None, "cuda_graph_modules": "full", "enable_cuda_graph": False, "external_cuda_graph": False,
    "attention_dropout": 0.1, "hidden_dropout": 0.1, "moe_input_jitter_eps": None,
    "moe_token_dispatcher_type": "allgather", "moe_layer_freq": 1, "moe_expert_capacity_factor": None,
    "moe_pad_expert_input_to_capacity": False, "moe_router_padding_for_fp8": False, "bf16": False, "fp16": False,
    "mtp_num_layers": None, "moe_paged_stash": False, "use_fused_mhc": False, "linear_attention_freq": None,
    "linear_conv_kernel_dim": None, "linear_key_head_dim": None, "linear_value_head_dim": None,
    "linear_num_key_heads": None, "linear_num_value_heads": None, "tensor_model_parallel_size": 1,
    "context_parallel_size": 1,
}
# Fields each revision's dataclass lacks (a keyword argument it does not know is a TypeError).
ABSENT = {
    "0.20.dev": {"enable_hyper_connections", "enable_mhc_connections", "mhc_recompute_layer_num", "use_fused_mhc"},
    "main": {"enable_hyper_connections", "use_fused_mhc"},
    "dev": {"enable_mhc_connections"},
}
HYPER_SWITCH = {"main": "enable_mhc_connections", "dev": "enable_hyper_connections"}
LABELS = {
    "0.20.dev": {"core_attn", "moe_act", "layernorm", "mla_up_proj", "mlp", "moe", "shared_experts", "gdn_norm_out"},
    "main": {"core_attn", "moe_act", "layernorm", "mla_up_proj", "mlp", "moe", "shared_experts", "gdn_norm_out",
             "gdp_in_proj", "gdp_qkv", "mhc"},
    "dev": {"core_attn", "moe_act", "layernorm", "mla_up_proj", "mlp", "moe", "shared_experts", "mhc", "gdn"},
}


class Rejected(Exception):
    def __init__(self, error_type, message, line, what):
        super().__init__(message)
        self.error_type, self.message, self.line, self.what = error_type, message, line, what


def replay(model, rev):
    """Megatron Core's verdict on `model` at `rev`: None when accepted, else Rejected. `line` is the line of
    transformer_config.py at `dev` (the replay's source), `what` names the check."""
    for key in model:
        if key in ABSENT[rev]:
            raise Rejected("TypeError", f"__init__() got an unexpected keyword argument '{key}'", 0,
                           "dataclass fields (the field does not exist at this revision)")
    c = dict(DEFAULTS)
    c[HYPER_SWITCH.get(rev, "_none")] = False
    c.update(model)
    c["offload_modules"] = list(c["offload_modules"] or [])

    def reject(line, what, message, error_type="ValueError"):
        raise Rejected(error_type, message, line, what)

    def require(ok, line, what, message):
        if not ok:
            reject(line, what, message, "AssertionError")

    # Gated delta net attention: the dev spelling, with its required geometry (line 1617ff).
    if rev == "dev" and c["experimental_attention_variant"] == "gated_delta_net":
        require(c["linear_attention_freq"] is not None, 1619, "gated_delta_net needs linear_attention_freq",
                "linear_attention_freq must be set for linear attention.")
        for f in ("linear_conv_kernel_dim", "linear_key_head_dim", "linear_value_head_dim", "linear_num_key_heads",
                  "linear_num_value_heads"):
            require(c[f] is not None, 1632, f"gated_delta_net needs {f}", f"{f} must be set for gated delta net.")
        require(c["linear_num_value_heads"] % c["linear_num_key_heads"] == 0, 1646, "linear heads",
                "linear_num_value_heads must be a multiple of linear_num_key_heads")
        tp = c["tensor_model_parallel_size"]
        require(c["linear_num_key_heads"] % tp == 0 and c["linear_num_value_heads"] % tp == 0, 1673,
                "linear heads divisible by TP", "linear heads must be a multiple of linear_head_parallel_size")

    # Shared experts: dispatcher (line 2034ff).
    if c["moe_shared_expert_intermediate_size"] is not None:
        if c["moe_shared_expert_overlap"] and c["moe_token_dispatcher_type"] not in ("alltoall", "flex"):
            reject(2046, "moe_shared_expert_overlap needs alltoall or flex",
                   "moe_shared_expert_overlap only works with alltoall or flex token dispatcher.")

    # CPU offloading (line 2104ff).
    if c["cpu_offloading"] and (c["cpu_offloading_num_layers"] < 0 or c["cpu_offloading_num_layers"] >= c["num_layers"]):
        reject(2108, "cpu_offloading_num_layers range", f"CPU offloading can be done only for layers less than {c['num_layers']}")
    if c["cpu_offloading"] and c["pipeline_model_parallel_size"] > 1:
        reject(2113, "cpu_offloading with PP", "Currently there is no support for Pipeline parallelism with CPU offloading")
    if c["cpu_offloading"] and c["recompute_granularity"] is not None:
        reject(2118, "cpu_offloading with recompute (RC001)",
               "CPU offloading does not work when activation recomputation is enabled")

    gran = c["recompute_granularity"]
    if gran is not None:
        if gran not in ("full", "selective"):
            reject(2122, "granularity value (RC002)", f'When using recompute_granuarlity: {gran} must be "full"or "selective".')
        # dev: the EP overlap recomputes whole stages and needs neither method nor num_layers (line 2132).
        stage = rev == "dev" and c["overlap_moe_expert_parallel_comm"] and gran == "full"
        if c["recompute_method"] is not None:
            if c["recompute_method"] not in ("block", "uniform"):
                reject(2137, "method value (RC003)", f'recompute_method: {c["recompute_method"]} must be "block" or "uniform".')
        elif gran != "selective" and not stage:
            reject(2141, "full needs a method (RC004)",
                   f'Using recompute_granularity: {gran} so recompute_method must be "block" or "uniform"')
        if gran != "selective" and c["recompute_num_layers"] is None and not stage:
            reject(2147, "full needs num_layers (RC005)",
                   f"When using recompute_granularity: {gran} recompute_num_layers must be between 1 and "
                   f"num_layers_per_pipeline_rank: {c['num_layers'] // c['pipeline_model_parallel_size']}")
        elif gran == "selective" and c["recompute_num_layers"] is not None:
            reject(2158, "selective takes no num_layers (RC006)",
                   f"When using recompute_granularity: {gran} recompute_num_layers must be None.")
        if c["distribute_saved_activations"] and c["sequence_parallel"]:
            reject(2166, "distributed activations with SP (RC007)",
                   f"distribute_saved_activations: {c['distribute_saved_activations']} must be false when sequence "
                   f"parallel is enabled: {c['sequence_parallel']}")

    if c["recompute_modules"] is None:
        c["recompute_modules"] = ["core_attn"]
    mods = c["recompute_modules"]
    if gran == "selective":
        if len(mods) > 0:
            invalid = set(mods) - LABELS[rev]
            require(not invalid, 2188, "labels (RC008)",
                    f"Invalid choices for recompute_modules: {invalid}. Allowed modules are: {LABELS[rev]}")
        if "moe_act" in mods and not c["moe_grouped_gemm"]:
            reject(2194, "moe_act needs grouped GEMM (RC009)",
                   "moe_act in recompute_modules is only supported with moe_grouped_gemm.")
        if "mla_up_proj" in mods and not c["multi_latent_attention"]:
            reject(2199, "mla_up_proj needs MLA (RC010)",
                   "mla_up_proj in recompute_modules is only supported with multi_latent_attention.")
        if rev == "dev" and "gdn" in mods and c["experimental_attention_variant"] != "gated_delta_net":
            reject(2205, "gdn needs gated_delta_net (RC029)",
                   "gdn in recompute_modules is only supported with experimental_attention_variant='gated_delta_net'.")
        if rev != "dev" and "gdn_norm_out" in mods and c["experimental_attention_variant"] not in ("gdn", "gdn2"):
            reject(0, "gdn_norm_out needs gdn/gdn2 (RC011)", "gdn_norm_out in recompute_modules is only supported with "
                   "experimental_attention_variant='gdn' or 'gdn2'.")
        if ("shared_experts" in mods and c["moe_shared_expert_intermediate_size"] is not None
                and c["moe_shared_expert_overlap"]):
            reject(2227, "shared_experts with overlap (RC012)",
                   "shared_experts recompute cannot work with --moe-shared-expert-overlap.")
        if c["fp8"] and ("moe_act" in mods or "layernorm" in mods):
            if c["fp8_recipe"] == "delayed":
                reject(2234, "moe_act/layernorm with delayed scaling (RC013)",
                       "Delayed scaling does not support moe_act and layernorm recompute for fp8.")
            # No Transformer Engine: is_te_min_version is false, the version 0.0.0 (RC014 with --te-version).
            reject(2239, "moe_act/layernorm fp8 needs TE 2.6 (RC014)",
                   "moe_act and layernorm recompute for fp8 needs transformer-engine>=2.6.0dev0, but your version is 0.0.0.")

    if c["moe_layer_recompute"]:
        if gran == "full":
            reject(2250, "moe_layer_recompute with full (RC015)",
                   "Do not set --moe-layer-recompute with full recompute granularity. ")
        gran = c["recompute_granularity"] = "selective"
        if "moe" not in mods:
            mods.append("moe")

    if rev in HYPER_SWITCH and gran == "selective" and "mhc" in mods:
        switch = HYPER_SWITCH[rev]
        if not c[switch]:
            reject(2260, "mhc needs hyper-connections (RC016)", f"'mhc' in recompute_modules requires {switch}=True.")
        if "mlp" in mods:
            reject(2264, "mhc with mlp (RC017)", "'mhc' and 'mlp' in recompute_modules cannot be used together. "
                   "They use different checkpoint mechanisms that may conflict.")
        n = c["mhc_recompute_layer_num"]
        if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
            reject(2269, "mhc_recompute_layer_num (RC018)",
                   "mhc_recompute_layer_num must be a positive integer when 'mhc' is in recompute_modules.")
        if rev == "dev" and c["fine_grained_activation_offloading"] and c["offload_modules"]:
            conflicting = {"attn_norm", "mlp_norm"} & set(c["offload_modules"])
            if conflicting:
                reject(2289, "mhc with attn_norm/mlp_norm offloading (RC019)",
                       f"'mhc' in recompute_modules is incompatible with offload_modules {conflicting}.")
        if rev == "main" and c["fine_grained_activation_offloading"]:
            reject(0, "mhc with fine-grained offloading (RC019)",
                   "'mhc' in recompute_modules + fine_grained_activation_offloading is not yet supported.",
                   "NotImplementedError")
    if (rev == "dev" and c["overlap_moe_expert_parallel_comm"] and gran == "selective" and "mhc" in mods
            and (c["cuda_graph_impl"] != "none" or c["enable_cuda_graph"] or c["external_cuda_graph"])):
        reject(2298, "mhc recompute, EP overlap and CUDA graphs (RC030)",
               "mHC recompute with overlap_moe_expert_parallel_comm requires CUDA graphs to be disabled because "
               "explicit group replay is eager-only.")
    if rev == "main" and c["enable_mhc_connections"] and gran == "full":
        reject(0, "hyper-connections with full recompute (RC020)",
               "enable_mhc_connections is not yet compatible with full activation recompute.", "NotImplementedError")
    if rev == "dev" and c["use_fused_mhc"] and not c["enable_hyper_connections"]:
        reject(2323, "use_fused_mhc needs hyper-connections", "use_fused_mhc requires enable_hyper_connections=True.")

    # Fine-grained activation offloading (line 2326ff).
    if c["fine_grained_activation_offloading"]:
        require(not c["cpu_offloading"], 2328, "offloading with cpu_offloading",
                "fine_grained_activation_offloading cannot be enabled with cpu_offloading.")
        require(len(c["offload_modules"]) > 0, 2330, "offload_modules set", "")
        allowed = {"core_attn", "attn_proj", "expert_fc1", "fused_group_mlp", "moe_act", "attn_norm", "mlp_norm",
                   "qkv_linear"}
        require(not set(c["offload_modules"]) - allowed, 2341, "offload_modules values", "Invalid choices for offload_modules")
        if "attn_proj" in c["offload_modules"] and "core_attn" not in c["offload_modules"]:
            reject(2346, "attn_proj offload needs core_attn", "attn_proj cannot be set to offload_modules alone without core_attn")
        if gran == "selective" and "moe" in mods:
            inside = {"moe_act", "expert_fc1", "fused_group_mlp"} & set(c["offload_modules"])
            require(not inside, 2355, "moe recompute with offloading inside it (RC021)",
                    f"Cannot offload {inside} while recomputing the entire MoE layer.")

    # MoE with fp8 needs Transformer Engine (line 2834ff); none is installed.
    if c["num_moe_experts"] and c["fp8"]:
        reject(2836, "MoE fp8 needs TE", "Only transformer-engine>=1.7.0 supports MoE FP8 training, but your version is 0.0.0.")

    # CUDA graphs (line 2904ff): legacy switches, scope normalization, then the recompute checks.
    if c["enable_cuda_graph"] or c["external_cuda_graph"]:
        require(c["cuda_graph_impl"] == "none", 2906, "legacy CUDA graph switch with cuda_graph_impl",
                "Do not use enable_cuda_graph or external_cuda_graph with cuda_graph_impl.")
        require(not (c["enable_cuda_graph"] and c["external_cuda_graph"]), 2909, "both legacy switches",
                "enable_cuda_graph and external_cuda_graph cannot be enabled at the same time.")
        c["cuda_graph_impl"] = "local" if c["enable_cuda_graph"] else "transformer_engine"
    modules_in = c["cuda_graph_scope"] if c["cuda_graph_scope"] is not None else c["cuda_graph_modules"]
    raw = [] if modules_in is None else list(modules_in) if isinstance(modules_in, list) else (
        modules_in.split(",") if modules_in else [])
    modules = [] if "full" in raw else raw
    impl = c["cuda_graph_impl"]
    require(not (impl == "full_iteration" and modules), 3000, "full_iteration takes no modules",
            'cuda_graph_modules must be empty when cuda_graph_impl="full_iteration".')
    if impl != "none":
        if c["cpu_offloading"] and impl != "full_iteration":
            reject(3006, "CUDA graphs with cpu_offloading", "CUDA graphs not supported with CPU offloading.")
        if impl in ("local", "transformer_engine"):
            if impl == "local" and ("moe_router" in modules or "moe_preprocess" in modules):
                modules += [m for m in ("moe_router", "moe_preprocess") if m not in modules]
            require(not ("moe" in modules and "moe_router" in modules), 3031, "moe and moe_router modules",
                    "cuda_graph_modules must not contain both moe and moe_router.")
            experts = c["num_moe_experts"]
            if experts is None or experts <= 1:
                require("moe" not in modules and "moe_router" not in modules, 3038, "moe modules need MoE",
                        "moe cuda graph is only supported for MoE.")
            else:
                if c["moe_layer_freq"] == 1:
                    require("mlp" not in modules, 3045, "mlp module needs dense layers",
                            "mlp cuda graph is only supported for dense layers, but not found in the model.")
                if c["moe_expert_capacity_factor"] is None or not c["moe_pad_expert_input_to_capacity"]:
                    require("moe" not in modules, 3054, "moe module needs drop-padding",
                            "moe cuda graph is only supported with drop-padding MoE.")
        if gran:
            if gran != "selective":
                require(impl == "full_iteration", 3067, "full recompute needs full_iteration graphs (RC022)",
                        "full recompute is only supported with full iteration CUDA graph.")
            else:
                if impl == "transformer_engine" and "moe" in mods:
                    require("moe_router" not in modules, 3076, "moe recompute with graphed router (RC023)",
                            "moe recompute is not supported with moe_router CUDA graph with: ")
                full_graph = impl == "full_iteration" or not modules
                if c["attention_dropout"] != 0.0:
                    require((not full_graph and "attn" not in modules) or "core_attn" not in mods, 3090,
                            "core_attn recompute graphed with dropout (RC024)",
                            "attention dropout is not supported with graphed attention recomputation.")
                if c["hidden_dropout"] != 0.0:
                    require(((not full_graph and "mlp" not in modules) or "mlp" not in mods) and
                            ((not full_graph and "moe" not in modules) or "moe" not in mods), 3097,
                            "mlp/moe recompute graphed with dropout (RC025)",
                            "hidden dropout is not supported with graphed MLP/MoE recomputation.")
                if c["moe_input_jitter_eps"] is not None:
                    require((not full_graph and "moe" not in modules) or "moe" not in mods, 3112,
                            "moe recompute graphed with jitter (RC026)",
                            "moe_input_jitter_eps is not supported with graphed moe recomputation.")

    # Expert-parallel all-to-all overlap (line 3188ff; PyTorch 2.11 passes the torch-version check).
    if c["overlap_moe_expert_parallel_comm"]:
        if c["pipeline_model_parallel_size"] > 1:
            require(c["virtual_pipeline_model_parallel_size"] is not None, 3194, "EP overlap with PP needs VPP",
                    "If enabling EP A2A overlap, virtual_pipeline_model_parallel_size must be specified when "
                    "pipeline_model_parallel_size > 1")
        require(c["expert_model_parallel_size"] > 1, 3200, "EP overlap needs EP",
                "overlap_moe_expert_parallel_comm is only supported with expert model parallelism")
        require(c["moe_token_dispatcher_type"] in ("alltoall", "flex"), 3203, "EP overlap needs alltoall/flex",
                "overlap_moe_expert_parallel_comm is supported with alltoall/flex token dispatcher")
        if rev == "dev" and gran == "full":
            require(c["recompute_method"] is None, 3215, "EP overlap stage recompute takes no method (RC027)",
                    "recompute_method must be None with overlap_moe_expert_parallel_comm full recompute: the whole "
                    "VPP stage (model chunk) is recomputed as a single unit")
            require(c["recompute_num_layers"] is None, 3219, "EP overlap stage recompute takes no num_layers (RC027)",
                    "recompute_num_layers must be None with overlap_moe_expert_parallel_comm full recompute (the "
                    "whole VPP stage is recomputed as a single unit)")
            require(c["attention_dropout"] == 0.0 and c["hidden_dropout"] == 0.0, 3227,
                    "EP overlap stage recompute needs dropout 0 (RC027)",
                    "overlap_moe_expert_parallel_comm full recompute currently requires attention_dropout==0 and "
                    "hidden_dropout==0 (RNG replay across the interleaved 1F1B schedule is not yet supported for "
                    "nonzero dropout)")
            require(impl == "none", 3238, "EP overlap stage recompute without CUDA graphs (RC027)",
                    'overlap_moe_expert_parallel_comm full recompute is not yet supported together with CUDA graphs '
                    '(cuda_graph_impl != "none").')
            require(not c["moe_paged_stash"], 3246, "EP overlap stage recompute without paged stash (RC027)",
                    "overlap_moe_expert_parallel_comm full recompute is not yet supported together with moe_paged_stash.")
            require(not (c["fp8"] and c["fp8_recipe"] == "delayed"), 3261,
                    "EP overlap stage recompute without fp8 delayed scaling (RC027)",
                    'overlap_moe_expert_parallel_comm full recompute is not yet supported with delayed-scaling FP8 '
                    '(fp8_recipe="delayed"): the backward-time recompute would double-update the persistent '
                    'amax_history. Use a current-scaling recipe (tensorwise / mxfp8 / blockwise) instead.')
        else:
            if rev != "dev":
                require(gran != "full", 0, "EP overlap forbids full recompute (RC027)",
                        "disable full recomputation when enabling overlap_moe_expert_parallel_comm")
            require(c["recompute_method"] is None, 3268, "EP overlap takes no method (RC027)",
                    "disable recomputation method when enabling overlap_moe_expert_parallel_comm")
            require(c["recompute_num_layers"] is None, 3271, "EP overlap takes no num_layers (RC027)",
                    "recompute_num_layers must be None when enabling overlap_moe_expert_parallel_comm")
        require("moe" not in mods, 3276, "EP overlap forbids moe recompute (RC027)",
                "disable moe in recompute_modules when enabling overlap_moe_expert_parallel_comm")
        require(c["bf16"] or c["fp16"], 3281, "EP overlap needs bf16/fp16",
                "overlap_moe_expert_parallel_comm is only supported with bf16 or fp16 model")
        require(not c["moe_shared_expert_overlap"], 3285, "EP overlap without shared-expert overlap",
                "disable moe_shared_expert_overlap when enabling overlap_moe_expert_parallel_comm")
    return None


def verdict_row(row_id, model, rev):
    row = {"id": row_id, "mcore": rev, "model": model}
    try:
        replay(model, rev)
        row["verdict"] = "ok"
        row["check"] = "accepted: no check of TransformerConfig.__post_init__ the model reaches rejects it"
    except Rejected as r:
        row["verdict"] = "error"
        row["error_type"] = r.error_type
        row["message"] = r.message[:400]
        where = f"transformer_config.py@{COMMITS[rev]}:{r.line}" if r.line else f"transformer_config.py@{COMMITS[rev]}"
        row["check"] = f"{where}: {r.what}"
    return row


def read_rows(name):
    with open(os.path.join(HERE, name)) as f:
        return [json.loads(line) for line in f]


def same_message(recorded, derived):
    # Set literals print in hash order, so compare up to the first one; the recorded text is cut at 400 characters.
    cut = lambda m: m.split("{")[0][:400]
    return cut(recorded) == cut(derived) or recorded.startswith(derived)


def check():
    bad = 0
    for name in ("mcore-0.20.dev.jsonl", "mcore-main.jsonl"):
        rows = read_rows(name)
        for row in rows:
            derived = verdict_row(row["id"], row["model"], row["mcore"])
            agree = derived["verdict"] == row["verdict"]
            if agree and row["verdict"] == "error":
                agree = derived["error_type"] == row["error_type"] and same_message(row["message"], derived["message"])
            if not agree:
                bad += 1
                print(f"{row['id']} ({row['mcore']}): recorded {row['verdict']} {row.get('message', '')!r}; "
                      f"derived {derived['verdict']} {derived.get('message', '')!r}")
        print(f"{name}: {len(rows)} rows replayed")
    print("all recorded verdicts reproduced" if bad == 0 else f"{bad} rows differ")
    return 1 if bad else 0


def dev_cases(base, rng):
    """Models aimed at what the dev revision does differently, built from the recorded models."""
    moe = [m for m in base if m.get("num_moe_experts")]
    out = []

    def pick(pool):
        return json.loads(json.dumps(rng.choice(pool)))

    def clear_recompute(m):
        for k in ("recompute_granularity", "recompute_method", "recompute_num_layers", "recompute_modules",
                  "moe_layer_recompute", "cpu_offloading", "cpu_offloading_num_layers", "distribute_saved_activations"):
            m.pop(k, None)
        return m

    # Hyper-connection recompute: the switch, mlp, the layer count, offloading, fused mHC.
    for _ in range(220):
        m = clear_recompute(pick(base))
        m["recompute_granularity"] = "selective"
        m["recompute_modules"] = rng.choice([["mhc"], ["mhc"], ["moe_act", "mhc"], ["mhc", "mlp"], ["core_attn", "mhc"],
                                              ["mla_up_proj", "mhc"], ["mhc", "shared_experts"]])
        if rng.random() < 0.8:
            m["enable_hyper_connections"] = rng.random() < 0.8
        if rng.random() < 0.3:
            m["mhc_recompute_layer_num"] = rng.choice([1, 2, 4, 0, -1])
        if rng.random() < 0.25:
            # Offloading under CUDA graphs has checks of its own that are not replayed here: no graphs.
            m.pop("cuda_graph_impl", None)
            m.pop("cuda_graph_scope", None)
            m["fine_grained_activation_offloading"] = True
            m["offload_modules"] = rng.choice([["attn_norm"], ["mlp_norm"], ["core_attn"], ["qkv_linear"],
                                               ["core_attn", "attn_norm"]])
        if rng.random() < 0.1:
            m["use_fused_mhc"] = True
        if rng.random() < 0.15:
            m["moe_layer_recompute"] = True
        out.append(m)
    def overlapped(vpp_chance):
        # A MoE model with the expert-parallel overlap switched on (its preconditions met but for VPP, at times).
        m = clear_recompute(pick(moe))
        m.pop("cuda_graph_scope", None)
        m.pop("cuda_graph_impl", None)
        m.update({"overlap_moe_expert_parallel_comm": True, "expert_model_parallel_size": 2,
                  "moe_token_dispatcher_type": "alltoall", "moe_shared_expert_overlap": False})
        if m.get("pipeline_model_parallel_size", 1) > 1 and rng.random() < vpp_chance:
            m["virtual_pipeline_model_parallel_size"] = 2
        return m

    # Full recompute under the expert-parallel overlap, which dev runs as whole-stage recompute.
    for _ in range(220):
        m = overlapped(0.8)
        m["recompute_granularity"] = rng.choice(["full", "full", "full", "selective", None])
        if rng.random() < 0.3:
            m["recompute_method"] = rng.choice(["uniform", "block"])
        if rng.random() < 0.3:
            m["recompute_num_layers"] = rng.choice([1, 2])
        if m["recompute_granularity"] == "selective":
            m["recompute_modules"] = rng.choice([["moe_act"], ["moe"], ["core_attn"], ["mla_up_proj"]])
        if rng.random() < 0.6:
            m["attention_dropout"] = 0.0
            m["hidden_dropout"] = 0.0 if rng.random() < 0.85 else 0.1
        if rng.random() < 0.2:
            m["cuda_graph_impl"] = rng.choice(["local", "transformer_engine", "full_iteration"])
        out.append(m)
    # mHC recompute under the overlap with and without CUDA graphs.
    for _ in range(120):
        m = overlapped(1.0)
        m.update({"enable_hyper_connections": True, "recompute_granularity": "selective",
                  "recompute_modules": rng.choice([["mhc"], ["moe_act", "mhc"], ["mhc", "mla_up_proj"]])})
        graph = rng.choice(["none", "none", "local", "transformer_engine", "full_iteration", "legacy"])
        if graph == "legacy":
            m["enable_cuda_graph"] = True
        elif graph != "none":
            m["cuda_graph_impl"] = graph
        out.append(m)
    # The dev branch's whole-module gated-delta-net label, and main's gdn_norm_out, which dev does not know.
    for _ in range(140):
        m = clear_recompute(pick(base))
        m["recompute_granularity"] = "selective"
        m["recompute_modules"] = rng.choice([["gdn"], ["gdn"], ["core_attn", "gdn"], ["gdn_norm_out"]])
        if rng.random() < 0.5:
            m["experimental_attention_variant"] = "gated_delta_net"
            if rng.random() < 0.9:
                m.update({"linear_attention_freq": 4, "linear_conv_kernel_dim": 4, "linear_key_head_dim": 64,
                          "linear_value_head_dim": 64, "linear_num_key_heads": 4, "linear_num_value_heads": 8})
        out.append(m)
    return out


def write():
    base = [row["model"] for row in read_rows("mcore-0.20.dev.jsonl")]
    rng = random.Random(20260813)
    rows = [verdict_row(f"d{i}", model, "dev") for i, model in enumerate(base)]
    rows += [verdict_row(f"dx{i}", model, "dev") for i, model in enumerate(dev_cases(base, rng))]
    with open(os.path.join(HERE, "mcore-dev.jsonl"), "w") as f:
        for row in rows:
            f.write(json.dumps(row, sort_keys=True) + "\n")
    counts = {}
    for row in rows:
        counts[row["verdict"]] = counts.get(row["verdict"], 0) + 1
    print(f"mcore-dev.jsonl: {len(rows)} rows {counts}")
    return 0


if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else "check"
    sys.exit({"check": check, "write": write}.get(command, lambda: print(__doc__) or 2)())
