// Hugging Face models: the bundled catalog's entries map onto the fields Bridge sets, the mapping's mechanisms
// (nested language models, hybrid patterns, MoE schedules, shared experts, layer kinds) on hand-written configs, and
// where the raw config.json comes from.
#include <catch2/catch.hpp>

#include "../support/temp_dir.hpp"
#include "parser/bridge/hf_models.hpp"
#include "py_test_support.hpp"

namespace {

using mbl::py::HfArchitecture;
using mbl::py::HfResolver;

// A resolver that sees no Hugging Face cache but `cache_dir` (never the user's).
HfResolver resolver(std::vector<std::string> hf_configs, const std::string& cache_dir) {
    return HfResolver(std::move(hf_configs), {cache_dir});
}

const mbl::Value* field(const HfArchitecture& a, const std::string& name) {
    for (const auto& f : a.fields)
        if (f.field == name) return &f.value;
    return nullptr;
}

std::string shown(const HfArchitecture& a, const std::string& name) {
    const mbl::Value* v = field(a, name);
    return v ? v->display() : "<absent>";
}

std::vector<std::int64_t> ints(const mbl::Value& v) {
    std::vector<std::int64_t> out;
    for (const auto& item : v.items()) out.push_back(item.as_int());
    return out;
}

}  // namespace

TEST_CASE("catalog: a hybrid Mamba/attention/MoE model keeps its layer pattern", "[python][hf]") {
    mbl::test::TempDir empty;
    auto hf = resolver({}, empty.path().string());
    auto super = hf.lookup("nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16");
    REQUIRE(super);
    CHECK(super->source == "the bundled catalog");
    const mbl::Value* pattern = field(*super, "hybrid_layer_pattern");
    REQUIRE(pattern);
    REQUIRE(pattern->is_string());
    CHECK(pattern->as_string().size() == 88);
    CHECK(pattern->as_string().rfind("MEMEMEM*E", 0) == 0);
    CHECK(shown(*super, "num_layers") == "88");
    CHECK(shown(*super, "is_hybrid_model") == "True");
    CHECK(shown(*super, "num_moe_experts") == "512");
    CHECK(shown(*super, "moe_grouped_gemm") == "True");
    // Bridge turns shared-expert overlap on, unless config.json says otherwise (this one does).
    CHECK(shown(*super, "moe_shared_expert_overlap") == "False");
    CHECK(shown(*super, "moe_shared_expert_intermediate_size") == "5376");
    CHECK(shown(*super, "mtp_num_layers") == "1");

    // Newer Nemotron configs list layer kinds (layers_block_type) instead of a pattern and leave out
    // num_hidden_layers: the transformers config class derives both.
    auto ultra = hf.lookup("nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16");
    REQUIRE(ultra);
    const auto& kinds = ultra->config->raw.at("layers_block_type");
    CHECK_FALSE(ultra->config->raw.contains("num_hidden_layers"));
    CHECK(shown(*ultra, "num_layers") == std::to_string(kinds.size()));
    const mbl::Value* ultra_pattern = field(*ultra, "hybrid_layer_pattern");
    REQUIRE(ultra_pattern);
    CHECK(ultra_pattern->as_string().size() == kinds.size());
    CHECK(ultra_pattern->as_string().substr(0, 4) == "MEME");
}

TEST_CASE("catalog: a multimodal model is read from its text_config", "[python][hf]") {
    mbl::test::TempDir empty;
    auto hf = resolver({}, empty.path().string());
    auto vl = hf.lookup("Qwen/Qwen3-VL-30B-A3B-Instruct");
    REQUIRE(vl);
    CHECK(vl->family == "qwen3_vl_moe");
    CHECK(vl->config->raw.contains("text_config"));
    CHECK_FALSE(vl->config->raw.contains("num_hidden_layers"));
    CHECK(shown(*vl, "num_layers") == "48");
    CHECK(shown(*vl, "num_moe_experts") == "128");
    CHECK(shown(*vl, "moe_grouped_gemm") == "True");

    // Qwen3.5: gated delta net layers, every fourth layer full attention, and one shared expert.
    auto q = hf.lookup("Qwen/Qwen3.5-35B-A3B");
    REQUIRE(q);
    CHECK(shown(*q, "experimental_attention_variant") == "\"gated_delta_net\"");
    const mbl::Value* kinds = field(*q, "linear_attention_freq");
    REQUIRE(kinds);
    REQUIRE(kinds->is_list());
    auto k = ints(*kinds);
    REQUIRE(k.size() == 40);
    CHECK(std::vector<std::int64_t>(k.begin(), k.begin() + 4) == std::vector<std::int64_t>{1, 1, 1, 0});
    CHECK(shown(*q, "moe_shared_expert_intermediate_size") == "512");
    CHECK(shown(*q, "mtp_num_layers") == "1");
    // tie_word_embeddings is read from the top level, where multimodal configs keep it.
    CHECK(shown(*q, "share_embeddings_and_output_weights") == "False");
}

TEST_CASE("catalog: an MoE model with multi-latent attention and a dense-first schedule", "[python][hf]") {
    mbl::test::TempDir empty;
    auto hf = resolver({}, empty.path().string());
    auto glm = hf.lookup("zai-org/GLM-5.2");
    REQUIRE(glm);
    CHECK(shown(*glm, "multi_latent_attention") == "True");
    CHECK(shown(*glm, "experimental_attention_variant") == "\"dsa\"");
    CHECK(shown(*glm, "q_lora_rank") == "2048");
    CHECK(shown(*glm, "num_moe_experts") == "256");
    CHECK(shown(*glm, "moe_shared_expert_intermediate_size") == "2048");
    CHECK(shown(*glm, "mtp_num_layers") == "None");  // Bridge drops GLM-5's MTP layer
    const mbl::Value* freq = field(*glm, "moe_layer_freq");
    REQUIRE(freq);
    auto f = ints(*freq);
    REQUIRE(f.size() == 78);
    CHECK(f[2] == 0);
    CHECK(f[3] == 1);
    // Every entry names where it came from.
    auto raw = hf.config("zai-org/GLM-5.2");
    REQUIRE(raw);
    const auto& entry = mbl::Schema::instance().model_catalog().at("models").at("zai-org/GLM-5.2");
    CHECK_FALSE(entry.at("source").get<std::string>().empty());
    CHECK((entry.at("confidence") == "exact" || entry.at("confidence") == "derived"));
    CHECK_FALSE(raw->raw.contains("source"));
    CHECK_FALSE(raw->raw.contains("confidence"));
}

TEST_CASE("every catalog entry names its source and maps the three basic sizes", "[python][hf]") {
    mbl::test::TempDir empty;
    auto hf = resolver({}, empty.path().string());
    const auto& models = mbl::Schema::instance().model_catalog().at("models");
    REQUIRE(models.size() >= 60);
    for (auto it = models.begin(); it != models.end(); ++it) {
        INFO(it.key());
        CHECK(it.value().contains("source"));
        CHECK((it.value().value("confidence", "") == "exact" || it.value().value("confidence", "") == "derived"));
        auto a = hf.lookup(it.key());
        REQUIRE(a);
        for (const char* name : {"num_layers", "hidden_size", "num_attention_heads"}) {
            INFO(name);
            const mbl::Value* v = field(*a, name);
            REQUIRE(v);
            CHECK(v->is_int());
        }
        // A family the mapping knows: no family fact is left unknown.
        for (const auto& f : a->fields) {
            INFO(f.field);
            const bool family_unknown =
                f.value.is_unknown() && f.detail.find("is not in schemas/models/hf-mapping.json") != std::string::npos;
            CHECK_FALSE(family_unknown);
        }
    }
}

TEST_CASE("mapping mechanisms on hand-written configs", "[python][hf]") {
    mbl::test::TempDir dir;
    // An omni model keeps its language model two levels down; Python's json writes Infinity.
    dir.write("omni/config.json",
              R"({"architectures": ["Qwen3OmniMoeForConditionalGeneration"], "model_type": "qwen3_omni_moe",
        "tie_word_embeddings": true,
        "thinker_config": {"text_config": {"num_hidden_layers": 6, "hidden_size": 64, "num_attention_heads": 4,
                                           "num_experts": 8, "moe_intermediate_size": 16, "tie_word_embeddings": false,
                                           "clip": [0.0, Infinity], "floor": -Infinity, "odd": NaN,
                                           "label": "Infinity stays text"}}})");
    // Layer kinds instead of a pattern string, an unknown kind, a schedule as layer indices in a string.
    dir.write("hybrid/config.json", R"({"architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h",
        "hidden_size": 32, "num_attention_heads": 2, "layers_block_type": ["mamba", "mlp", "attention", "moe"]})");
    dir.write("odd/config.json", R"({"model_type": "nemotron_h", "hidden_size": 32, "num_attention_heads": 2,
        "layers_block_type": ["mamba", "teleport"]})");
    dir.write("step/config.json", R"({"architectures": ["Step3p5ForCausalLM"], "model_type": "step3p5",
        "num_hidden_layers": 5, "hidden_size": 32, "num_attention_heads": 2, "moe_num_experts": 4,
        "moe_layers_enum": "1,3,4,9"})");
    dir.write("step-flat/config.json", R"({"architectures": ["Step3p5ForCausalLM"], "model_type": "step3p5",
        "num_hidden_layers": 5, "hidden_size": 32, "num_attention_heads": 2, "moe_num_experts": 4,
        "first_k_dense_replace": 1})");
    dir.write("kinds/config.json", R"({"model_type": "exaone_moe", "num_hidden_layers": 3, "hidden_size": 32,
        "num_attention_heads": 2, "num_experts": 4, "moe_intermediate_size": 8, "num_shared_experts": 2,
        "mlp_layer_types": ["dense", "sparse", "sparse"], "first_k_dense_replace": 2})");
    dir.write("gdn/config.json", R"({"model_type": "qwen3_next", "num_hidden_layers": 8, "hidden_size": 32,
        "num_attention_heads": 2, "num_experts": 4, "full_attention_interval": 4})");
    dir.write("mystery/config.json", R"({"model_type": "mystery", "num_hidden_layers": 2, "hidden_size": 8,
        "num_attention_heads": 1, "num_experts": 2})");
    auto hf = resolver({"t/omni=" + (dir / "omni"), "t/hybrid=" + (dir / "hybrid"), "t/odd=" + (dir / "odd"),
                        "t/step=" + (dir / "step"), "t/step-flat=" + (dir / "step-flat"), "t/kinds=" + (dir / "kinds"),
                        "t/gdn=" + (dir / "gdn"), "t/mystery=" + (dir / "mystery")},
                       (dir / "no-cache"));
    REQUIRE(hf.errors().empty());

    auto omni = hf.lookup("t/omni");
    REQUIRE(omni);
    CHECK(shown(*omni, "num_layers") == "6");
    CHECK(shown(*omni, "num_moe_experts") == "8");
    CHECK(shown(*omni, "moe_grouped_gemm") == "True");
    CHECK(shown(*omni, "share_embeddings_and_output_weights") == "True");  // the top level wins
    const auto& text = omni->config->raw.at("thinker_config").at("text_config");
    CHECK(text.at("clip")[1].is_null());
    CHECK(text.at("floor").is_null());
    CHECK(text.at("odd").is_null());
    CHECK(text.at("label") == "Infinity stays text");
    CHECK(mbl::py::language_model_config(omni->config->raw).at("num_hidden_layers") == 6);

    auto hybrid = hf.lookup("t/hybrid");
    REQUIRE(hybrid);
    CHECK(shown(*hybrid, "hybrid_layer_pattern") == "\"M-*E\"");
    CHECK(shown(*hybrid, "num_layers") == "4");
    auto odd = hf.lookup("t/odd");
    REQUIRE(odd);
    CHECK(field(*odd, "hybrid_layer_pattern") == nullptr);  // a kind without a character: no pattern is guessed

    auto step = hf.lookup("t/step");
    REQUIRE(step);
    REQUIRE(field(*step, "moe_layer_freq"));
    CHECK(ints(*field(*step, "moe_layer_freq")) == std::vector<std::int64_t>{0, 1, 0, 1, 1});  // 9 is past the end
    auto flat = hf.lookup("t/step-flat");
    REQUIRE(flat);
    REQUIRE(field(*flat, "moe_layer_freq"));
    CHECK(field(*flat, "moe_layer_freq")->is_unknown());  // Bridge reads no first_k_dense_replace for Step

    auto kinds = hf.lookup("t/kinds");
    REQUIRE(kinds);
    CHECK(ints(*field(*kinds, "moe_layer_freq")) == std::vector<std::int64_t>{0, 1, 1});  // the list wins
    CHECK(shown(*kinds, "moe_shared_expert_intermediate_size") == "16");

    auto gdn = hf.lookup("t/gdn");
    REQUIRE(gdn);
    CHECK(shown(*gdn, "linear_attention_freq") == "4");
    CHECK(shown(*gdn, "experimental_attention_variant") == "\"gated_delta_net\"");

    // A family the mapping does not know: its facts stay unknown, the sizes are still read.
    auto mystery = hf.lookup("t/mystery");
    REQUIRE(mystery);
    CHECK(shown(*mystery, "num_layers") == "2");
    REQUIRE(field(*mystery, "moe_grouped_gemm"));
    CHECK(field(*mystery, "moe_grouped_gemm")->is_unknown());
}

TEST_CASE("the raw config.json comes from --hf-config, else the cache, else the catalog", "[python][hf]") {
    const std::string id = "deepseek-ai/DeepSeek-V3";
    mbl::test::TempDir dir;
    dir.write("given/config.json", R"({"model_type": "deepseek_v3", "num_hidden_layers": 3, "hidden_size": 16,
        "num_attention_heads": 2})");
    dir.write("hub/models--deepseek-ai--DeepSeek-V3/snapshots/r1/config.json",
              R"({"model_type": "deepseek_v3", "num_hidden_layers": 7, "hidden_size": 16, "num_attention_heads": 2})");
    dir.write("hub/models--deepseek-ai--DeepSeek-V3/refs/main", "r1");

    auto catalog_only = resolver({}, dir / "no-cache");
    auto from_catalog = catalog_only.config(id);
    REQUIRE(from_catalog);
    CHECK(from_catalog->source == "the bundled catalog");
    CHECK(from_catalog->raw.at("num_hidden_layers") == 61);
    CHECK(from_catalog->raw.at("architectures")[0] == "DeepseekV3ForCausalLM");
    CHECK_FALSE(from_catalog->raw.contains("source"));
    CHECK(catalog_only.lookup(id)->config == from_catalog);

    auto with_cache = resolver({}, dir / "hub");
    auto from_cache = with_cache.config(id);
    REQUIRE(from_cache);
    CHECK(from_cache->source.find("the Hugging Face cache") == 0);
    CHECK(from_cache->raw.at("num_hidden_layers") == 7);
    CHECK(shown(*with_cache.lookup(id), "num_layers") == "7");

    auto with_both = resolver({id + "=" + (dir / "given")}, dir / "hub");
    auto from_flag = with_both.config(id);
    REQUIRE(from_flag);
    CHECK(from_flag->source.find("--hf-config") == 0);
    CHECK(from_flag->raw.at("num_hidden_layers") == 3);

    CHECK(with_both.config("nobody/nothing") == nullptr);
    CHECK(with_both.lookup("nobody/nothing") == nullptr);
}

TEST_CASE("an unknown model is reported once per file, at its first call site", "[python][hf]") {
    pytest::TempTree tree(pytest::Files{{"r.py", R"(
from megatron.bridge import AutoBridge
from megatron.bridge.training.config import ConfigContainer


def _provider():
    return AutoBridge.from_hf_pretrained("nobody/nothing").to_megatron_provider()


def b_config() -> ConfigContainer:
    return ConfigContainer(model=AutoBridge.from_hf_pretrained("nobody/nothing").to_megatron_provider())


def a_config() -> ConfigContainer:
    return ConfigContainer(model=_provider())


def c_config() -> ConfigContainer:
    return ConfigContainer(model=_provider())


def other_config() -> ConfigContainer:
    return ConfigContainer(model=AutoBridge.from_hf_pretrained("someone/else").to_megatron_provider())
)"}});
    auto r = pytest::lint(tree, "r.py");
    std::vector<const mbl::Diagnostic*> in010;
    for (const auto& d : r.diagnostics)
        if (d.code == "IN010") in010.push_back(&d);
    REQUIRE(in010.size() == 2);  // one per model id
    const mbl::Diagnostic& nothing = *in010[0];
    CHECK(nothing.message.find("\"nobody/nothing\"") != std::string::npos);
    CHECK(nothing.range.line == 7);  // the helper's call comes first in the file
    std::vector<std::pair<int, std::string>> also;
    for (const auto& n : nothing.notes)
        if (n.message.rfind("also in recipe ", 0) == 0) also.emplace_back(n.range.line, n.message.substr(15));
    // The helper line stands for two recipes: one is the diagnostic's own, the other a note; b_config has its own line.
    REQUIRE(also.size() == 2);
    CHECK(also[0].first == 7);
    CHECK(also[1] == std::make_pair(11, std::string("b_config")));
    CHECK(in010[1]->message.find("\"someone/else\"") != std::string::npos);
}
