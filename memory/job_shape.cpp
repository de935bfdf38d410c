// The layer shape of the effective model: sizes, activation, norms, attention kernel, MoE, MLA, Mamba, parallelism
// and fp8. Each default is Megatron Core's TransformerConfig default (the schemas' revision defaults stand in for
// fields the config leaves unset).
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "core/schema.hpp"
#include "memory/job_parts.hpp"

namespace mbl::memory {
namespace {

// The activation function's last name component: "silu", "gelu", "squared_relu", "quick_gelu", ... ("" = unset).
std::string activation_name(const EffectiveModel& m) {
    const Value& v = m[field::activation_func];
    std::string name = v.is_string() ? v.as_string() : v.is_map() ? v.target() : "";
    const auto dot = name.find_last_of('.');
    return dot == std::string::npos ? name : name.substr(dot + 1);
}

void fill_dense(const EffectiveModel& m, LayerShape& s) {
    s.weight_grad_transient = !flag_of(m, field::gradient_accumulation_fusion);
    s.query_groups = int_or(m, field::num_query_groups, s.heads);
    if (s.query_groups <= 0) s.query_groups = s.heads;
    s.head_dim = int_or(m, field::kv_channels, s.hidden / s.heads);
    if (s.head_dim <= 0) s.head_dim = s.hidden / s.heads;
    s.ffn_hidden = int_or(m, field::ffn_hidden_size, 4 * s.hidden);
    if (s.ffn_hidden <= 0) s.ffn_hidden = 4 * s.hidden;
    s.gated = flag_of(m, field::gated_linear_unit);
    s.linear_bias = flag_of(m, field::add_bias_linear);
    // Megatron's MLP fuses bias + GeLU / GeGLU / SwiGLU when bias_activation_fusion is on; other activations run
    // unfused (an unset activation_func is Megatron Core's GeLU).
    const std::string act = activation_name(m);
    const bool fusable = act.empty() || act == "gelu" || act == "quick_gelu" || (act == "silu" && s.gated);
    s.fused_activation = flag_of(m, field::bias_activation_fusion) && fusable;
    s.fp8_activation_input = flag_of(m, field::activation_func_fp8_input_store);
    s.layernorm = m.str(field::normalization).value_or("LayerNorm") == "LayerNorm";
    s.attention_dropout = number_or(m, field::attention_dropout, 0.0);
    s.hidden_dropout = number_or(m, field::hidden_dropout, 0.0);
}

void fill_attention(const EffectiveModel& m, LayerShape& s, std::vector<Assumption>& notes) {
    // Fields a revision gives no default for read as None here; TransformerConfig's default is True.
    const Value& softmax_fp32 = m[field::attention_softmax_in_fp32];
    s.softmax_fp32 = !softmax_fp32.is_bool() || softmax_fp32.as_bool();
    auto fused = m.attention_is_fused();
    if (!fused) notes.push_back({"attention backend unknown: Transformer Engine fused attention assumed"});
    s.attention = fused.value_or(true) ? AttentionKernel::Fused : AttentionKernel::Unfused;
    // Megatron's fused scale-mask-softmax kernel (masked_softmax_fusion) takes 16-bit scores of at most 4096 keys
    // and keeps only its bf16 output; otherwise the torch path keeps an fp32 copy as well. Its conditions are
    // FusedScaleMaskSoftmax.is_kernel_available (megatron/core/fusions/fused_softmax.py lines 253-259 at 2a75ac12).
    const std::int64_t heads_per_rank =
        s.heads / std::max<std::int64_t>(1, int_or(m, field::tensor_model_parallel_size, 1));
    const std::int64_t keys = s.seq_length;
    if (s.attention == AttentionKernel::Unfused && flag_of(m, field::masked_softmax_fusion) &&
        (flag_of(m, field::bf16) || flag_of(m, field::fp16)) && keys > 16 && keys <= 4096 && keys % 4 == 0 &&
        (s.micro_batch * heads_per_rank) % 4 == 0) {
        s.softmax_kernel = true;
        notes.push_back({"masked_softmax_fusion: Megatron's fused softmax kernel assumed installed (attention "
                         "probabilities kept once, in bf16)"});
    }
    const bool local = m.str(field::transformer_impl) == "local";
    s.input_norm_separate = local || flag_of(m, field::multi_latent_attention);
    s.pre_mlp_norm_separate = local;
    // qk_layernorm on ordinary attention: the spec's q_layernorm and k_layernorm are its qk norm, the local spec's
    // torch norm (models/gpt/gpt_layer_specs.py lines 398, 401 and 447-452 at d98e8a64) or Transformer Engine's TENorm
    // (lines 318 and 327-332; extensions/transformer_engine.py lines 1080-1092: te.pytorch.LayerNorm / RMSNorm).
    // qk_l2_norm takes precedence with an L2Norm (transformer/torch_norm.py lines 76-118), whose torch steps are not
    // counted. MLA's latent norms are fill_mla's.
    if (!flag_of(m, field::multi_latent_attention)) {
        s.qk_norm = flag_of(m, field::qk_layernorm) && !flag_of(m, field::qk_l2_norm);
        s.qk_norm_contiguous = !local;
        if (flag_of(m, field::qk_l2_norm))
            notes.push_back({"qk_l2_norm: what the query and key L2 norms keep for backward is not counted"});
    }
}

void fill_moe(const EffectiveModel& m, LayerShape& s) {
    const std::string act = activation_name(m);
    s.experts = int_or(m, field::num_moe_experts, 0);
    s.topk = int_or(m, field::moe_router_topk, 2);
    s.expert_ffn = int_or(m, field::moe_ffn_hidden_size, s.ffn_hidden);
    if (s.expert_ffn <= 0) s.expert_ffn = s.ffn_hidden;
    s.shared_expert_ffn = std::max<std::int64_t>(0, int_or(m, field::moe_shared_expert_intermediate_size, 0));
    // The weighted fused kernels: bias_swiglu / quick_geglu with bias_activation_fusion, squared ReLU with
    // use_fused_weighted_squared_relu (experts.py); anything else runs the activation and `* probs` unfused.
    s.expert_fused_activation =
        (flag_of(m, field::bias_activation_fusion) && s.gated &&
         (act.empty() || act == "silu" || act == "quick_gelu")) ||
        (flag_of(m, field::use_fused_weighted_squared_relu) && act == "squared_relu" && !s.gated);
    const std::string dispatcher = m.str(field::moe_token_dispatcher_type).value_or("allgather");
    s.dispatcher = dispatcher == "alltoall" ? Dispatcher::AllToAll
                   : dispatcher == "flex"   ? Dispatcher::Flex
                                            : Dispatcher::AllGather;
    s.permute_fusion = flag_of(m, field::moe_permute_fusion);
    s.shared_expert_overlap = flag_of(m, field::moe_shared_expert_overlap);
    // Megatron Core's local spec builds SequentialMLP experts, which ignore moe_act (measured on an H200:
    // gpu_check/DEVICE_RUNS.md), unless moe_grouped_gemm chooses the legacy GroupedMLP: which it builds is a fact of
    // the revision (schemas/mcore: local_spec_grouped_gemm_experts, SequentialMLP from 0.17 on).
    const bool local = m.str(field::transformer_impl) == "local";
    const auto& grouped = m.revision ? m.revision->enum_values(revision_enum::local_spec_grouped_gemm_experts)
                                     : std::vector<std::string>{};
    const bool legacy_grouped =
        flag_of(m, field::moe_grouped_gemm) && std::find(grouped.begin(), grouped.end(), "GroupedMLP") != grouped.end();
    s.expert_act_checkpoint = !local || legacy_grouped;
}

void fill_mla(const EffectiveModel& m, LayerShape& s) {
    s.mla = true;
    // Unset means MLATransformerConfig's default 512 (q_lora_rank and kv_lora_rank, transformer/transformer_config.py
    // lines 3026 and 3029 at 2a75ac12); an explicit None means no query compression.
    const Value& q_rank = m[field::q_lora_rank];
    s.q_lora_rank = q_rank.is_int() ? std::max<std::int64_t>(0, q_rank.as_int())
                    : q_rank.is_null() && q_rank.prov().origin == Origin::Default ? 512
                                                                                  : 0;
    s.kv_lora_rank = int_or(m, field::kv_lora_rank, 512);
    s.qk_head_dim = int_or(m, field::qk_head_dim, 128);
    s.qk_pos_dim = int_or(m, field::qk_pos_emb_head_dim, 64);
    s.v_head_dim = int_or(m, field::v_head_dim, 128);
    // Without qk_layernorm there are no latent norms (transformer/mla_qk_norm_config.py at d98e8a64,
    // _resolve_disabled_qk_layernorm, lines 69-105: IdentityOp q_layernorm and kv_layernorm, plain up-projections).
    // With it, Transformer Engine's MLA spec fuses them into the up-projections (LayerNormLinear); the local spec
    // builds them as norms of their own (models/gpt/gpt_layer_specs.py lines 428-429).
    const bool local = m.str(field::transformer_impl) == "local";
    s.mla_latent_norms = flag_of(m, field::qk_layernorm);
    s.mla_latent_norm_fused = !local && s.mla_latent_norms;
    // The local spec's down-projections are column-parallel (gpt_layer_specs.py lines 422 and 424), Transformer
    // Engine's are duplicated TELinear (lines 302 and 304): the local latents are gathered over the TP ranks first
    // (multi_latent_attention.py lines 652-655 and 747-755).
    s.mla_column_parallel_down = local;
    // Without apply_rope_fusion the rotary step is Megatron Core's torch one (models/common/embeddings/rope_utils.py,
    // _apply_rotary_pos_emb_bshd, reached from line 404).
    s.mla_unfused_rope = !flag_of(m, field::apply_rope_fusion);
}

// A GPTModel field that is no TransformerConfig field (position_embedding_type, rotary_percent): as the config sets
// it, else the default of the revision's model config class (GPTModelConfig, or HybridModelConfig for a hybrid layer
// pattern: megatron/training/models/gpt.py and hybrid.py, schemas/mcore/classes/), else None where the revision
// declares none (Megatron Core before 0.19 has no GPTModelConfig). `where` says which default it is.
const Value* model_class_field(const EffectiveModel& m, FieldName name, std::string& where) {
    const Value& set = m[name];
    if (!set.is_null() || !m.revision || !m.revision->classes) return set.is_null() ? nullptr : &set;
    const char* cls = hybrid_pattern(m) ? "HybridModelConfig" : "GPTModelConfig";
    const ResolvedField r = m.revision->classes->lookup(cls, name.str());
    if (!r.field || !r.field->default_value || !r.owner) return nullptr;
    where = fmt::format("{}'s default ({})", cls, m.revision->classes->where(*r.owner, r.field->line));
    return &*r.field->default_value;
}

// Rotary position embeddings on ordinary attention: GPTModel builds a RotaryEmbedding for position_embedding_type
// rope (YarnRotaryEmbedding for yarn, MultimodalRotaryEmbedding for mrope) unless the attention is multi-latent
// (models/gpt/gpt_model.py lines 183-225 at d98e8a64), and each attention layer applies it to the query and the key
// (transformer/attention.py lines 1508 and 1527) through rope_utils.apply_rotary_pos_emb, which runs Transformer
// Engine's fused step with apply_rope_fusion and the torch step otherwise or where the fused one cannot (lines
// 340-371: mRoPE with several samples, a YaRN concentration factor). Megatron Bridge turns apply_rope_fusion off for
// any position embedding but rope (models/gpt_provider.py lines 230-231, utils/fusions.py lines 84-92 at 067f987).
void fill_rotary(const EffectiveModel& m, LayerShape& s, std::vector<Assumption>& notes) {
    if (s.mla) return;  // multi-latent attention applies its own rotary step (fill_mla)
    std::string where;
    const Value* type = model_class_field(m, field::position_embedding_type, where);
    if (!type || !type->is_string()) {
        if (!type && m.revision)
            notes.push_back(
                {fmt::format("position_embedding_type not set, and Megatron Core {} declares no default for "
                             "it: no rotary step counted",
                             m.revision->name)});
        return;
    }
    const std::string kind = type->as_string();
    if (!where.empty() && kind != "rope" && kind != "yarn" && kind != "mrope")
        notes.push_back({fmt::format("position_embedding_type not set: {}, {}: no rotary step counted", kind, where)});
    s.rotary = kind == "rope" || kind == "yarn" || kind == "mrope";
    if (!s.rotary) return;
    std::string percent_where;
    const Value* percent = model_class_field(m, field::rotary_percent, percent_where);
    const double share = percent && percent->is_number() ? percent->as_number() : 1.0;
    if (!percent) notes.push_back({"rotary_percent not set, and no default is declared for it: 1.0 assumed"});
    // RotaryEmbedding's dim (rotary_pos_embedding.py lines 72-74): kv_channels, or int(kv_channels x rotary_percent).
    s.rotary_dim = share < 1.0 ? static_cast<std::int64_t>(static_cast<double>(s.head_dim) * share) : s.head_dim;
    s.rotary_per_sample = kind == "mrope";
    const bool fused = flag_of(m, field::apply_rope_fusion) || flag_of(m, field::fused_single_qkv_rope);
    s.rotary_unfused = !fused || kind != "rope";
    if (m[field::no_rope_freq].truthy())
        notes.push_back({"no_rope_freq: every attention layer is counted with its rotary step (the layers that skip it "
                         "keep less)"});
}

void fill_mamba_and_parallel(const EffectiveModel& m, LayerShape& s) {
    s.mamba_heads = std::max<std::int64_t>(0, int_or(m, field::mamba_num_heads, 0));
    s.mamba_head_dim = std::max<std::int64_t>(1, int_or(m, field::mamba_head_dim, 64));
    s.mamba_groups = std::max<std::int64_t>(1, int_or(m, field::mamba_num_groups, 8));
    s.mamba_state = std::max<std::int64_t>(1, int_or(m, field::mamba_state_dim, 128));
    s.mamba_chunk = std::max<std::int64_t>(1, int_or(m, field::mamba_chunk_size, 128));
    s.tp = static_cast<int>(std::max<std::int64_t>(1, int_or(m, field::tensor_model_parallel_size, 1)));
    s.cp = static_cast<int>(std::max<std::int64_t>(1, int_or(m, field::context_parallel_size, 1)));
    s.ep = static_cast<int>(std::max<std::int64_t>(1, int_or(m, field::expert_model_parallel_size, 1)));
    s.etp = static_cast<int>(std::max<std::int64_t>(1, int_or(m, field::expert_tensor_parallel_size, s.tp)));
    s.sequence_parallel = flag_of(m, field::sequence_parallel);
}

// Transformer Engine's context-parallel attention by cp_comm_type: "p2p", "all_gather", "a2a", "a2a+p2p"
// (attn_forward_func_with_cp, transformer_engine/pytorch/attention/dot_product_attention/context_parallel.py lines
// 5096-5139 at TE 2.18.0 e7c550c5, any other string raises there). Megatron Core passes "p2p" when it is unset
// (extensions/transformer_engine.py lines 2141-2142 at d98e8a64); a per-layer list is read by its costliest entry.
std::optional<CpComm> cp_comm_of(const std::string& name) {
    if (name == "p2p") return CpComm::P2P;
    if (name == "all_gather") return CpComm::AllGather;
    if (name == "a2a") return CpComm::AllToAll;
    if (name == "a2a+p2p") return CpComm::AllToAllP2P;
    return std::nullopt;
}

// Retained bytes rank the variants: the all-to-all ones keep the attention output twice, p2p and all_gather once.
int cp_comm_cost(CpComm c) { return c == CpComm::AllToAll || c == CpComm::AllToAllP2P ? 1 : 0; }

void fill_cp(const EffectiveModel& m, LayerShape& s, std::vector<Assumption>& notes) {
    if (s.cp <= 1 || s.attention != AttentionKernel::Fused) return;
    const Value& v = m[field::cp_comm_type];
    std::vector<std::string> names;
    if (v.is_string()) names.push_back(v.as_string());
    if (v.is_list())
        for (const Value& item : v.items())
            if (item.is_string()) names.push_back(item.as_string());
    bool unknown = !v.is_null() && !v.is_string() && !v.is_list();
    std::optional<CpComm> pick;
    for (const auto& name : names) {
        const auto c = cp_comm_of(name);
        if (!c) unknown = true;
        else if (!pick || cp_comm_cost(*c) > cp_comm_cost(*pick)) pick = c;
    }
    s.cp_comm = pick.value_or(CpComm::P2P);
    if (unknown)
        notes.push_back({fmt::format("cp_comm_type not known here: Transformer Engine's context-parallel attention "
                                     "assumed to exchange keys and values as {}",
                                     cp_comm_name(s.cp_comm))});
}

// Transformer Engine keeps the GEMM inputs it saves quantized, one usage each (module/linear.py,
// layernorm_linear.py, grouped_linear.py): one byte per element plus the recipe's block scales.
void fill_fp8(const EffectiveModel& m, LayerShape& s, std::vector<Assumption>& notes) {
    if (!m.known({field::fp8}) || !m.str(field::fp8)) return;
    s.fp8 = true;
    const std::string recipe = m.str(field::fp8_recipe).value_or("delayed");
    // MXFP8 keeps one 8-bit scale per 32 values; blockwise one fp32 scale per 128.
    s.fp8_scale_bytes = recipe == "mxfp8" ? 1.0 / 32 : recipe == "blockwise" ? 4.0 / 128 : 0.0;
    notes.push_back({fmt::format("fp8 ({}): the GEMM inputs Transformer Engine saves are kept quantized, one byte "
                                 "each{}; attention, norm statistics and the residual stream stay in bf16; "
                                 "amax histories and scaling factors are not counted",
                                 recipe, s.fp8_scale_bytes > 0 ? " plus block scales" : "")});
}

}  // namespace

void fill_shape(const EffectiveModel& m, LayerShape& s, std::vector<Assumption>& notes) {
    fill_dense(m, s);
    fill_attention(m, s, notes);
    if (m.is_moe()) fill_moe(m, s);
    if (flag_of(m, field::multi_latent_attention)) fill_mla(m, s);
    fill_rotary(m, s, notes);
    fill_mamba_and_parallel(m, s);
    fill_fp8(m, s, notes);
    fill_cp(m, s, notes);
}

}  // namespace mbl::memory
