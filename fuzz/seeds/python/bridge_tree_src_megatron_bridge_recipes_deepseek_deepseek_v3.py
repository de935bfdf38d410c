from megatron.bridge import AutoBridge
from megatron.bridge.recipes.common import _pretrain_common
from megatron.bridge.training.comm_overlap import CommOverlapConfig
from megatron.bridge.training.config import ConfigContainer


def set_pipeline_layout(model_cfg, layout=None):
    """Like Bridge's layout helper: returns early when a layout is given, else looks it up by (pp, vp)."""
    if layout is not None:
        model_cfg.pipeline_model_parallel_layout = layout
        return
    pp_size = model_cfg.pipeline_model_parallel_size or 1
    vp_size = model_cfg.virtual_pipeline_model_parallel_size or 1
    last = ["mtp"] * (getattr(model_cfg, "mtp_num_layers", 1) or 0) + ["loss"]
    layout_map = {
        (1, 1): None,
        (8, 1): [["embedding"] + ["decoder"] * 8] + [["decoder"] * 8] * 6 + [["decoder"] * 5 + last],
    }
    if (pp_size, vp_size) in layout_map:
        model_cfg.pipeline_model_parallel_layout = layout_map[(pp_size, vp_size)]


def deepseek_v3_pretrain_config() -> ConfigContainer:
    """DeepSeek-V3 from the bundled catalog: MLA, 256 experts, three dense layers first."""
    cfg = _pretrain_common()
    cfg.model = AutoBridge.from_hf_pretrained("deepseek-ai/DeepSeek-V3").to_megatron_provider(load_weights=False)
    cfg.model.tensor_model_parallel_size = 2
    cfg.model.pipeline_model_parallel_size = 8
    cfg.model.expert_model_parallel_size = 64
    cfg.model.sequence_parallel = True
    set_pipeline_layout(cfg.model)
    cfg.model.recompute_granularity = None
    cfg.model.recompute_modules = None
    cfg.comm_overlap = CommOverlapConfig(tp_comm_overlap=False)
    cfg.comm_overlap.overlap_moe_expert_parallel_comm = False
    cfg.model.moe_shared_expert_overlap = True
    if cfg.model.multi_latent_attention:  # known from the catalog: True
        cfg.model.apply_rope_fusion = False
    return cfg
