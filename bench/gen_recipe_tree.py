#!/usr/bin/env python3
"""Generates a Megatron-Bridge-shaped source tree for the recipe benchmark.

Layout (src/megatron/bridge/...): training/ (ConfigContainer and section dataclasses, mixed precision recipes,
comm overlap), models/ (provider dataclasses), recipes/<family>/ (base recipes loading Hugging Face models, a
sibling helper module), perf_recipes/<family>/<gpu>/ (flat perf recipes calling base recipes and shared helpers),
with re-export chains through __init__.py files. Defaults: 10 families x 75 recipes = 750 recipe functions in 120
modules. Usage: gen_recipe_tree.py OUT_DIR [--families N]
"""
import argparse
import os
import random
import re

MODELS = [
    ("meta-llama/Meta-Llama-3-8B", "dense"), ("meta-llama/Meta-Llama-3-70B", "dense"),
    ("Qwen/Qwen3-30B-A3B", "moe"), ("Qwen/Qwen3-235B-A22B", "moe"), ("deepseek-ai/DeepSeek-V3", "mla"),
    ("moonshotai/Kimi-K2-Instruct", "mla"), ("Qwen/Qwen3-8B", "dense"), ("openai/gpt-oss-120b", "moe"),
    ("meta-llama/Meta-Llama-3.1-405B", "dense"), ("zai-org/GLM-4.5", "moe"),
]
GPUS = ["h100", "b200", "gb200", "gb300", "b300"]
LABELS = {"dense": [["core_attn"], ["mlp"], ["layernorm", "mlp"], []],
          "moe": [["moe_act"], ["moe"], ["moe_act", "layernorm"], ["mlp"]],
          "mla": [["mla_up_proj", "mlp"], ["mla_up_proj", "moe_act"], ["moe"], ["layernorm", "mla_up_proj"]]}


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


SHARED = {
    "src/megatron/bridge/__init__.py": "from megatron.bridge.models.conversion.auto_bridge import AutoBridge\n",
    "src/megatron/bridge/models/conversion/auto_bridge.py": (
        "import transformers\n\n\nclass AutoBridge:\n    @classmethod\n    def from_hf_pretrained(cls, path, **kw):\n"
        "        raise RuntimeError('never followed')\n"),
    "src/megatron/bridge/models/__init__.py": (
        "from .gpt_provider import GPTModelProvider\nfrom .moe_provider import MoEModelProvider\n"),
    "src/megatron/bridge/models/gpt_provider.py": (
        "from dataclasses import dataclass, field\n\nfrom megatron.core.transformer.transformer_config import "
        "TransformerConfig\n\n\n@dataclass\nclass GPTModelProvider(TransformerConfig):\n    seq_length: int = 4096\n"
        "    hidden_dropout: float = 0.0\n    attention_dropout: float = 0.0\n    make_vocab_size_divisible_by: int = 128\n"
        "    cuda_graph_scope: list = field(default_factory=list)\n"),
    "src/megatron/bridge/models/moe_provider.py": (
        "from dataclasses import dataclass, field\n\nfrom .gpt_provider import GPTModelProvider\n\n\n@dataclass\n"
        "class MoEModelProvider(GPTModelProvider):\n    num_moe_experts: int = 64\n    moe_grouped_gemm: bool = True\n"
        "    moe_layer_freq: list = field(default_factory=lambda: [0] + [1] * 23)\n    num_layers: int = 24\n"),
    "src/megatron/bridge/training/__init__.py": "",
    "src/megatron/bridge/training/config.py": (
        "from dataclasses import dataclass, field\nfrom typing import Optional, Union\n\n"
        "from megatron.core.distributed import DistributedDataParallelConfig\n\n\n"
        "@dataclass\nclass TrainingConfig:\n    micro_batch_size: int = 1\n    global_batch_size: int = 32\n"
        "    train_iters: int = 1000\n    manual_gc: bool = False\n    manual_gc_interval: int = 0\n\n\n"
        "@dataclass\nclass OptimizerConfig:\n    lr: float = 3e-4\n    use_precision_aware_optimizer: bool = False\n\n\n"
        "@dataclass\nclass CheckpointConfig:\n    save: Optional[str] = None\n    save_interval: int = 500\n\n\n"
        "@dataclass\nclass RNGConfig:\n    seed: int = 1234\n    te_rng_tracker: bool = False\n\n\n"
        "@dataclass(kw_only=True)\nclass ConfigContainer:\n    model: object\n    train: TrainingConfig\n"
        "    optimizer: OptimizerConfig = field(default_factory=OptimizerConfig)\n"
        "    ddp: object = field(default_factory=DistributedDataParallelConfig)\n"
        "    checkpoint: CheckpointConfig = field(default_factory=CheckpointConfig)\n"
        "    rng: RNGConfig = field(default_factory=RNGConfig)\n"
        "    mixed_precision: Optional[Union[str, object]] = None\n    comm_overlap: Optional[object] = None\n"),
    "src/megatron/bridge/training/mixed_precision.py": (
        "from dataclasses import dataclass\nfrom typing import Optional\n\n\n@dataclass\nclass MixedPrecisionConfig:\n"
        "    bf16: bool = False\n    fp8: Optional[str] = None\n    fp8_recipe: str = 'tensorwise'\n"
        "    grad_reduce_in_fp32: bool = True\n\n\ndef bf16_mixed():\n    return MixedPrecisionConfig(bf16=True)\n\n\n"
        "def bf16_with_fp8_current_scaling_mixed():\n    return MixedPrecisionConfig(bf16=True, fp8='hybrid')\n\n\n"
        "def bf16_with_mxfp8_mixed():\n    return MixedPrecisionConfig(bf16=True, fp8='e4m3', fp8_recipe='mxfp8')\n"),
    "src/megatron/bridge/training/comm_overlap.py": (
        "from dataclasses import dataclass\nfrom typing import Optional\n\n\n@dataclass\nclass CommOverlapConfig:\n"
        "    tp_comm_overlap: bool = False\n    overlap_moe_expert_parallel_comm: Optional[bool] = None\n"
        "    delay_wgrad_compute: bool = False\n"),
    "src/megatron/bridge/recipes/__init__.py": "",
    "src/megatron/bridge/recipes/common.py": (
        "import os\n\nfrom megatron.bridge.training.config import CheckpointConfig, ConfigContainer, TrainingConfig\n\n"
        "DEFAULT_SEQ = 4096\n\n\ndef _pretrain_common() -> ConfigContainer:\n"
        "    base = os.path.join(os.getcwd(), 'experiments')\n"
        "    cfg = ConfigContainer(\n        model=None,\n        train=TrainingConfig(train_iters=300000, global_batch_size=512,"
        " micro_batch_size=1, manual_gc=True, manual_gc_interval=100),\n"
        "        checkpoint=CheckpointConfig(save=base, save_interval=500),\n        mixed_precision='bf16_mixed',\n"
        "        comm_overlap=None,\n    )\n    return cfg\n"),
    "src/megatron/bridge/recipes/utils/__init__.py": "",
    "src/megatron/bridge/recipes/utils/tokenizer_utils.py": "DEFAULT_NULL_TOKENIZER_VOCAB_SIZE = 131072\n",
    "src/megatron/bridge/recipes/utils/environment.py": (
        "COMMON_ENV = {'CUDA_DEVICE_MAX_CONNECTIONS': 1, 'NCCL_NVLS_ENABLE': 0}\n"),
    "src/megatron/bridge/training/flex_dispatcher_backend.py": (
        "def apply_flex_dispatcher_backend(model_cfg, backend=None):\n    if backend is None:\n        return\n"
        "    if model_cfg.num_moe_experts is None:\n        return\n    model_cfg.moe_token_dispatcher_type = 'flex'\n"
        "    model_cfg.moe_flex_dispatcher_backend = backend\n"),
    "src/megatron/bridge/recipes/utils/dataset_utils.py": (
        "def default_dataset(seq_length=4096, blend=None):\n    return {'seq_length': seq_length, 'blend': blend}\n"),
    "src/megatron/bridge/models/conversion/__init__.py": "",
    "src/megatron/bridge/training/utils.py": "def get_world_size_safe():\n    return 1\n",
    "src/megatron/bridge/perf_recipes/__init__.py": "",
    "src/megatron/bridge/perf_recipes/_common.py": (
        "from megatron.bridge.training.mixed_precision import bf16_mixed, bf16_with_fp8_current_scaling_mixed, "
        "bf16_with_mxfp8_mixed\n\n\ndef _benchmark_common(cfg, cross_entropy_impl='te'):\n    cfg.train.train_iters = 50\n"
        "    cfg.checkpoint.save = None\n    if getattr(cfg.model, 'num_moe_experts', None):\n"
        "        cfg.model.moe_router_force_load_balancing = True\n    cfg.model.cross_entropy_fusion_impl = cross_entropy_impl\n"
        "    if not isinstance(cfg.mixed_precision, str):\n        cfg.mixed_precision.grad_reduce_in_fp32 = False\n"
        "    impl = getattr(cfg.model, 'cuda_graph_impl', None)\n    scope = getattr(cfg.model, 'cuda_graph_scope', None) or []\n"
        "    names = {s if isinstance(s, str) else getattr(s, 'name', '') for s in scope}\n"
        "    active = (impl is not None and impl != 'none') or 'full_iteration' in names\n"
        "    if impl is not None or names:\n        cfg.rng.te_rng_tracker = cfg.model.use_te_rng_tracker = active\n\n\n"
        "def _perf_precision(dtype):\n    if dtype == 'bf16':\n        mp = bf16_mixed()\n    elif dtype == 'fp8_cs':\n"
        "        mp = bf16_with_fp8_current_scaling_mixed()\n    elif dtype == 'fp8_mx':\n        mp = bf16_with_mxfp8_mixed()\n"
        "    else:\n        raise ValueError(dtype)\n    mp.grad_reduce_in_fp32 = False\n    return mp\n"),
}


def family_modules(i, hf_id, kind, rnd):
    fam = f"fam{i}"
    labels = LABELS[kind]
    helpers = (
        f"from megatron.bridge.training.comm_overlap import CommOverlapConfig\n\nLABELS = {labels!r}\n\n\n"
        f"def _{fam}_common(cfg, tp=1, pp=1, *, selective=True, **extra):\n    model = cfg.model\n"
        f"    model.tensor_model_parallel_size, model.pipeline_model_parallel_size = tp, pp\n"
        f"    model.sequence_parallel = tp > 1\n    if selective:\n        model.recompute_granularity = 'selective'\n"
        f"        model.recompute_modules = list(LABELS[0])\n    else:\n        model.recompute_granularity = 'full'\n"
        f"        model.recompute_method = 'uniform'\n        model.recompute_num_layers = 1\n"
        f"    for key, value in extra.items():\n        setattr(model, key, value)\n"
        f"    cfg.comm_overlap = CommOverlapConfig(tp_comm_overlap=tp > 1)\n\n\n"
        f"def _{fam}_layout(cfg):\n    pp = cfg.model.pipeline_model_parallel_size or 1\n"
        f"    layouts = {{1: None, 2: [['embedding'] + ['decoder'] * 4, ['decoder'] * 4 + ['loss']]}}\n"
        f"    if pp in layouts:\n        cfg.model.pipeline_model_parallel_layout = layouts[pp]\n"
    )
    base = [
        "import torch\n\nfrom megatron.bridge import AutoBridge\n"
        "from megatron.bridge.recipes.common import DEFAULT_SEQ, _pretrain_common\n"
        "from megatron.bridge.recipes.utils.environment import COMMON_ENV\n"
        "from megatron.bridge.recipes.utils.tokenizer_utils import DEFAULT_NULL_TOKENIZER_VOCAB_SIZE\n"
        "from megatron.bridge.training.flex_dispatcher_backend import apply_flex_dispatcher_backend\n"
        "from megatron.bridge.training.config import ConfigContainer\n\n"
        f"from ._{fam}_helpers import _{fam}_common, _{fam}_layout\n\nHF_ID = {hf_id!r}\n"
    ]
    names = []
    for r in range(15):
        name = f"{fam}_base{r}_pretrain_config"
        names.append(name)
        tp, pp = rnd.choice([(1, 1), (2, 1), (2, 2), (4, 2), (8, 4)])
        body = [f"\n\ndef {name}() -> ConfigContainer:", f'    """Base recipe {r} of family {i}."""',
                "    cfg = _pretrain_common()",
                "    cfg.model = AutoBridge.from_hf_pretrained(HF_ID).to_megatron_provider(load_weights=False)",
                f"    _{fam}_common(cfg, tp={tp}, pp={pp}, selective={r % 3 != 0})",
                "    cfg.model.seq_length = DEFAULT_SEQ * 2", "    cfg.model.pipeline_dtype = torch.bfloat16",
                "    cfg.model.context_parallel_size = 1", "    cfg.model.cross_entropy_loss_fusion = True",
                "    cfg.model.transformer_impl = 'transformer_engine'", "    cfg.model.cuda_graph_impl = 'none'",
                "    cfg.model.attention_backend = None", "    cfg.train.global_batch_size = 512",
                "    cfg.train.micro_batch_size = 1", "    cfg.optimizer.lr = 3e-4",
                "    cfg.optimizer.use_precision_aware_optimizer = False", "    cfg.checkpoint.save_interval = 1000"]
        for k in range(12):
            body.append(f"    cfg.train.extra_setting_{k} = {k} * {r + 1}")
        if r % 4 == 1:
            body += ["    if cfg.model.pipeline_model_parallel_size > 1:", "        _" + fam + "_layout(cfg)"]
        body += ["    cfg.env_vars = {**COMMON_ENV, 'NVTE_FWD_LAYERNORM_SM_MARGIN': 20}",
                 "    cfg.tokenizer_vocab_size = DEFAULT_NULL_TOKENIZER_VOCAB_SIZE",
                 f"    apply_flex_dispatcher_backend(cfg.model, {['None', repr('deepep')][r % 2]})"]
        if r % 5 == 2:
            body.append(f"    cfg.model.recompute_modules = LABELS_{fam.upper()}")
        body.append("    return cfg")
        base.append("\n".join(body) + "\n")
    base.insert(1, f"LABELS_{fam.upper()} = {labels[1]!r}\n")
    perf_common = (
        "# ruff: noqa: F401\nfrom megatron.bridge.perf_recipes._common import _benchmark_common, _perf_precision\n"
        f"from megatron.bridge.recipes.{fam}.{fam} import {names[0]} as base_recipe\n"
        f"from megatron.bridge.recipes.{fam}.{fam} import {names[1]}, {names[2]}\n"
        "from megatron.bridge.training.config import ConfigContainer\n\n\n"
        f"def _{fam}_perf_common(cfg, modules=None):\n    cfg.model.recompute_granularity = 'selective'\n"
        "    if modules is not None:\n        cfg.model.recompute_modules = modules\n    cfg.model.moe_router_fusion = True\n"
    )
    gpu_modules = {}
    for g, gpu in enumerate(GPUS):
        lines = [f'"""{gpu} performance recipes for family {i}."""\n',
                 f"from ..common import ConfigContainer, _benchmark_common, _{fam}_perf_common, _perf_precision, base_recipe\n"
                 f"from ..common import {names[1]}\n"]
        for r in range(12):
            name = f"{fam}_pretrain_{2 ** (r % 6 + 3)}gpu_{gpu}_v{r}_config"
            dtype = ["bf16", "fp8_cs", "fp8_mx"][r % 3]
            mods = labels[(r + g) % len(labels)]
            body = [f"\n\ndef {name}() -> ConfigContainer:", f'    """{gpu} recipe {r}."""']
            if r % 4 == 3:
                prev = f"{fam}_pretrain_{2 ** ((r - 1) % 6 + 3)}gpu_{gpu}_v{r - 1}_config"
                body += [f"    cfg = {prev}()", f"    cfg.train.global_batch_size = {256 * (r + 1)}"]
            else:
                src = "base_recipe" if r % 2 == 0 else names[1]
                body += [f"    cfg = {src}()", f"    cfg.mixed_precision = _perf_precision({dtype!r})",
                         f"    _{fam}_perf_common(cfg, modules={mods!r})",
                         f"    cfg.model.tensor_model_parallel_size = {[1, 2, 4][r % 3]}",
                         f"    cfg.model.pipeline_model_parallel_size = {[1, 2, 4, 8][r % 4]}",
                         f"    cfg.model.virtual_pipeline_model_parallel_size = {[None, 2][r % 2]}",
                         "    cfg.model.sequence_parallel = cfg.model.tensor_model_parallel_size > 1",
                         f"    cfg.train.global_batch_size = {1024 * (g + 1)}", "    cfg.train.micro_batch_size = 1",
                         "    _benchmark_common(cfg)"]
            body.append("    return cfg")
            lines.append("\n".join(body) + "\n")
        gpu_modules[f"src/megatron/bridge/perf_recipes/{fam}/{gpu}/{fam}.py"] = "".join(lines)
    files = {
        f"src/megatron/bridge/recipes/{fam}/__init__.py": f"from .{fam} import *  # noqa: F403\n",
        f"src/megatron/bridge/recipes/{fam}/_{fam}_helpers.py": helpers,
        f"src/megatron/bridge/recipes/{fam}/{fam}.py": "".join(base),
        f"src/megatron/bridge/perf_recipes/{fam}/__init__.py": "",
        f"src/megatron/bridge/perf_recipes/{fam}/common.py": perf_common,
    }
    files.update(gpu_modules)
    return files


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--families", type=int, default=10)
    args = parser.parse_args()
    rnd = random.Random(42)
    files = dict(SHARED)
    for i in range(args.families):
        hf_id, kind = MODELS[i % len(MODELS)]
        files.update(family_modules(i, hf_id, kind, rnd))
    for rel, text in files.items():
        write(args.out, rel, text)
    recipes = sum(len(re.findall(r"^def [a-z]\w*\(\) -> ConfigContainer:", text, re.M)) for text in files.values())
    print(f"{len(files)} modules, {recipes} recipe functions in {args.out}")


if __name__ == "__main__":
    main()
