#include "core/run_facts.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "core/model_fields.hpp"
#include "core/schema.hpp"

namespace mbl {
namespace {

// A field of a config section; nullptr when the section or the field is absent or None.
const Value* section_field(const Value& root, std::string_view section, std::string_view field) {
    const Value* sec = root.find(section);
    if (!sec || !sec->is_map()) return nullptr;
    const Value* v = sec->find(field);
    return v && !v->is_null() ? v : nullptr;
}

Value field_or_null(const Value& root, std::string_view section, std::string_view field) {
    const Value* v = section_field(root, section, field);
    return v ? *v : Value();
}

OptimizerFacts read_optimizer(const Value& root) {
    OptimizerFacts o;
    o.optimizer = field_or_null(root, "optimizer", "optimizer");
    o.use_distributed_optimizer = field_or_null(root, "optimizer", "use_distributed_optimizer");
    if (o.use_distributed_optimizer.is_null())
        o.use_distributed_optimizer = field_or_null(root, "ddp", "use_distributed_optimizer");
    o.use_precision_aware_optimizer = field_or_null(root, "optimizer", "use_precision_aware_optimizer");
    o.main_params_dtype = field_or_null(root, "optimizer", "main_params_dtype");
    o.exp_avg_dtype = field_or_null(root, "optimizer", "exp_avg_dtype");
    o.exp_avg_sq_dtype = field_or_null(root, "optimizer", "exp_avg_sq_dtype");
    o.fp8_recipe = field_or_null(root, "optimizer", "fp8_recipe");
    o.cpu_offload = field_or_null(root, "optimizer", "optimizer_cpu_offload");
    o.store_param_remainders = field_or_null(root, "optimizer", "store_param_remainders");
    return o;
}

// Bridge's PEFT classes (megatron.bridge.peft.lora.LoRA, .dora.DoRA), as a config dump or a recipe writes them.
PeftFacts read_peft(const Value& root) {
    PeftFacts p;
    const Value* peft = root.find("peft");
    if (!peft || peft->is_null()) return p;
    p.section = *peft;
    std::string name;
    if (peft->is_map()) name = peft->target();
    else if (peft->is_string()) name = peft->as_string();  // `peft: lora`, as Bridge's scripts take the scheme
    p.target = name.empty() ? peft->display() : name;
    const std::string last = name.substr(name.find_last_of('.') == std::string::npos ? 0 : name.find_last_of('.') + 1);
    if (last == "LoRA" || last == "lora") p.scheme = PeftFacts::Scheme::Lora;
    else if (last == "DoRA" || last == "dora") p.scheme = PeftFacts::Scheme::Dora;
    else p.scheme = PeftFacts::Scheme::Other;
    if (peft->is_map()) {
        if (const Value* v = peft->find("dim")) p.dim = *v;
        if (const Value* v = peft->find("target_modules")) p.target_modules = *v;
        if (const Value* v = peft->find("dropout")) p.dropout = *v;
    }
    return p;
}

Value recipe_gpus(std::string_view recipe, const SourceRange& at) {
    const auto gpus = gpus_in_recipe_name(recipe);
    if (!gpus) return Value();
    return Value::integer(*gpus, Provenance::at(Origin::Derived, at,
                                                fmt::format("the recipe name {} states {} GPUs (Bridge's "
                                                            "benchmark naming, which its launcher reads)",
                                                            recipe, *gpus)));
}

}  // namespace

std::optional<int> gpus_in_recipe_name(std::string_view recipe) {
    static const std::pair<std::regex, int> pattern = [] {
        const auto text = schema_file("launch.json");
        const nlohmann::json j = text ? nlohmann::json::parse(*text) : nlohmann::json::object();
        return std::pair{std::regex(j.value("recipe_gpus_pattern", std::string("$^"))),
                         j.value("recipe_gpus_group", 0)};
    }();
    std::match_results<std::string_view::const_iterator> m;
    if (recipe.empty() || !std::regex_search(recipe.begin(), recipe.end(), m, pattern.first)) return std::nullopt;
    if (pattern.second <= 0 || static_cast<std::size_t>(pattern.second) >= m.size()) return std::nullopt;
    const std::string digits = m[static_cast<std::size_t>(pattern.second)].str();
    if (digits.size() > 7) return std::nullopt;
    return std::stoi(digits);
}

RunFacts read_run_facts(const Value& root, const Value& model_seq_length, std::string_view recipe,
                        const SourceRange& recipe_at) {
    RunFacts run;
    run.micro_batch_size = field_or_null(root, "train", "micro_batch_size");
    run.global_batch_size = field_or_null(root, "train", "global_batch_size");
    const Value* dataset_seq = section_field(root, "dataset", "seq_length");
    run.seq_length = model_seq_length.prov().origin == Origin::Default && dataset_seq ? *dataset_seq : model_seq_length;
    run.optimizer = read_optimizer(root);
    run.ddp.grad_reduce_in_fp32 = field_or_null(root, "ddp", "grad_reduce_in_fp32");
    run.ddp.num_distributed_optimizer_instances = field_or_null(root, "ddp", "num_distributed_optimizer_instances");
    run.ddp.use_megatron_fsdp = field_or_null(root, "ddp", "use_megatron_fsdp");
    run.ddp.data_parallel_sharding_strategy = field_or_null(root, "ddp", "data_parallel_sharding_strategy");
    run.tokenizer.vocab_size = field_or_null(root, "tokenizer", "vocab_size");
    run.tokenizer.tokenizer_model = field_or_null(root, "tokenizer", "tokenizer_model");
    run.peft = read_peft(root);
    run.gpus = recipe_gpus(recipe, recipe_at);
    return run;
}

}  // namespace mbl
