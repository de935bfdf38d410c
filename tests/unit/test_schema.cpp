#include <catch2/catch.hpp>

#include <map>
#include <nlohmann/json.hpp>

#include "core/recompute.hpp"
#include "core/schema.hpp"
#include "rules/megatron_raises.hpp"
#include "rules/registry.hpp"

using mbl::Schema;
namespace known_crash = mbl::known_crash;
namespace revision_enum = mbl::revision_enum;

// Whether the revision enforces the error rule `code`: its compiled checks have a raise site the rule names.
bool enforces(const mbl::Revision& rev, const char* code) {
    return mbl::enforced_at(mbl::find_rule(code)->info(), rev);
}

TEST_CASE("every revision from 0.12 to main is known, with aliases", "[schema]") {
    const Schema& s = Schema::instance();
    for (const char* name : {"0.12", "0.13", "0.14", "0.15", "0.16", "0.17", "0.18", "0.19", "0.20.dev", "dev", "main"})
        CHECK(s.revision(name)->name == name);
    CHECK(s.revision("core_v0.19.0")->name == "0.19");
    CHECK(s.revision("0.19.0")->name == "0.19");
    CHECK(s.revision("core_v0.19")->name == "0.19");
    // Patch releases have facts of their own (schemas/mcore/facts/).
    CHECK(s.revision("core_v0.12.3")->name == "core_v0.12.3");
    CHECK(s.revision("0.18.2")->name == "core_v0.18.2");
    CHECK(s.revision("bridge-main")->name == "0.20.dev");
    CHECK(s.revision("bridge-dev")->name == "dev");
    CHECK(s.revision("0.11") == nullptr);
    CHECK(s.revision("0.18.1") == nullptr);  // no such release tag
    CHECK(s.revision(s.default_revision()) != nullptr);
}

TEST_CASE("revision names are unambiguous: each maps to one revision, the doubtful ones to none", "[schema]") {
    const Schema& s = Schema::instance();
    for (const char* name : {"bridge", "0.20"}) {
        const auto found = s.lookup_revision(name);
        CHECK(found.revision == nullptr);
        CHECK_FALSE(found.ambiguity.empty());
        CHECK(s.revision_error(name, "--mcore").find("is ambiguous") != std::string::npos);
    }
    CHECK(s.revision_error("0.99", "--mcore").rfind("unknown Megatron Core revision \"0.99\" for --mcore", 0) == 0);
    CHECK(s.revision_error("dev", "--mcore").empty());
    for (const auto& [alias, target] : s.revision_aliases()) CHECK(s.revision(alias) == s.revision(target));
    // A commit is recorded by one revision only, so a pinned commit maps to exactly one.
    std::map<std::string, std::string> owner;
    for (const auto& name : s.revision_names()) {
        const mbl::Revision* r = s.revision(name);
        CHECK(r->release.empty() != r->commit.empty());
        std::vector<std::string> shas;
        if (!r->commit.empty()) shas.push_back(r->commit);
        for (const auto& [tag, sha] : r->tags) shas.push_back(sha);
        for (const auto& sha : shas) {
            CHECK(sha.size() == 40);
            CHECK(owner.emplace(sha, name).second);
            CHECK(s.revision_for_commit(sha.substr(0, 7)) == s.revision_for_commit(sha));
            CHECK(s.revision(sha.substr(0, 12)) == s.revision_for_commit(sha));
        }
        // The revision's own commit is it; a patch release's tag is that release, with facts of its own.
        CHECK(s.revision_for_commit(shas.front()) == r);
        for (const auto& [tag, sha] : r->tags)
            if (tag != r->release) CHECK(s.revision_for_commit(sha)->name == tag);
    }
    CHECK(s.revision_for_commit("2a75ac1") == s.revision("0.20.dev"));
    CHECK(s.revision_for_commit("2a75ac") == nullptr);  // too short to name a commit
    CHECK(s.revision_for_commit("0123456789abcdef0123456789abcdef01234567") == nullptr);
}

TEST_CASE("what each name stands for: release tags and pinned commits", "[schema]") {
    const Schema& s = Schema::instance();
    CHECK(s.revision("0.19")->what() == "release core_v0.19.0");
    CHECK(s.revision("0.15")->what() == "release core_v0.15.0");  // its patch releases have facts of their own
    CHECK(s.revision("core_v0.15.2")->what() == "release core_v0.15.2");
    CHECK(s.revision("002255075c37")->what() ==
          "commit 002255075c37 (2026-06-13), pinned by a Megatron Bridge branch or tag");
    CHECK(s.revision("0.20.dev")->commit == "2a75ac12c54ba6a42b34024756820bf819a2e25f");
    CHECK(s.revision("dev")->commit == "b3b1e2d793c596c2fa61076d001ab93f294e4e87");
    CHECK(s.revision("dev")->branch == "dev");
    CHECK(s.revision("dev")->what().rfind("commit b3b1e2d793c5 (2026-08-13, dev branch), Megatron Bridge's dev pin",
                                          0) == 0);
    CHECK(s.revision("main")->what() == "commit d98e8a64ddf3 (2026-08-22, main branch)");
}

TEST_CASE("labels by revision follow the reference sheet", "[schema]") {
    const Schema& s = Schema::instance();
    CHECK_FALSE(s.revision("0.13")->has_label("shared_experts"));
    CHECK(s.revision("0.14")->has_label("shared_experts"));
    CHECK_FALSE(s.revision("0.18")->has_label("gdn_norm_out"));
    CHECK(s.revision("0.19")->has_label("gdn_norm_out"));
    CHECK_FALSE(s.revision("0.20.dev")->has_label("mhc"));
    for (const char* l : {"gdp_in_proj", "gdp_qkv", "mhc", "core_attn"}) CHECK(s.revision("main")->has_label(l));
    // The dev branch: mhc and its own whole-module gdn label, but not main's gdn_norm_out nor the gdp labels.
    for (const char* l : {"mhc", "gdn", "shared_experts", "core_attn"}) CHECK(s.revision("dev")->has_label(l));
    for (const char* l : {"gdn_norm_out", "gdp_in_proj", "gdp_qkv"}) CHECK_FALSE(s.revision("dev")->has_label(l));
}

TEST_CASE("the recompute vocabulary: defaults and output-discarding labels per revision", "[schema]") {
    const Schema& s = Schema::instance();
    for (const auto& name : s.revision_names()) {
        INFO(name);
        const mbl::Revision& r = *s.revision(name);
        CHECK(r.default_modules == std::vector<std::string>{"core_attn"});
        // Every output-discarding label is one the revision accepts; the normal checkpoints are not among them.
        for (const auto& l : r.output_discarding) CHECK(r.has_label(l));
        for (const char* l : {"core_attn", "mlp", "moe", "shared_experts"}) CHECK_FALSE(r.discards_output(l));
        for (const char* l : {"moe_act", "layernorm", "mla_up_proj"}) CHECK(r.discards_output(l));
    }
    CHECK_FALSE(s.revision("0.18")->discards_output("gdn_norm_out"));
    CHECK(s.revision("0.19")->discards_output("gdn_norm_out"));
    for (const char* l : {"gdp_in_proj", "gdp_qkv", "mhc"}) CHECK(s.revision("main")->discards_output(l));
    CHECK(s.revision("dev")->discards_output("mhc"));
}

TEST_CASE("recompute choices print and parse back", "[schema]") {
    using mbl::Recompute;
    for (const Recompute& r :
         {Recompute::none(), Recompute::selective({}), Recompute::selective({"core_attn", "mlp"}),
          Recompute::full(Recompute::Method::Uniform, 1), Recompute::full(Recompute::Method::Block, 2)})
        CHECK(mbl::parse_recompute(r.describe()).describe() == r.describe());
    CHECK(Recompute::selective({"mlp"}).has("mlp"));
    CHECK_FALSE(Recompute::full(Recompute::Method::Block, 2).has("mlp"));
    CHECK_THROWS_AS(mbl::parse_recompute("full sideways 2"), std::invalid_argument);
}

TEST_CASE("the dev pin's checks differ from 0.20.dev and main as its source does", "[schema]") {
    const Schema& s = Schema::instance();
    const mbl::Revision& dev = *s.revision("dev");
    for (const char* code : {"RC016", "RC017", "RC018", "RC019", "RC029", "RC030", "RC027"}) CHECK(enforces(dev, code));
    CHECK_FALSE(enforces(dev, "RC011"));  // gdn_norm_out is not a label there
    CHECK_FALSE(enforces(dev, "RC020"));  // full recompute with hyper-connections is accepted
    CHECK_FALSE(enforces(*s.revision("main"), "RC029"));
    CHECK_FALSE(enforces(*s.revision("main"), "RC030"));
    CHECK(dev.enum_values(revision_enum::mhc_connections_field) ==
          std::vector<std::string>{"enable_hyper_connections"});
    CHECK(s.revision("main")->enum_values(revision_enum::mhc_connections_field) ==
          std::vector<std::string>{"enable_mhc_connections"});
    CHECK(dev.enum_values(revision_enum::ep_overlap_full_recompute) == std::vector<std::string>{"stage"});
    CHECK(s.revision("0.20.dev")->enum_values(revision_enum::ep_overlap_full_recompute).empty());
    CHECK(dev.enum_values(revision_enum::gated_delta_net_variants) == std::vector<std::string>{"gated_delta_net"});
    CHECK_FALSE(
        dev.crashes(known_crash::layernorm_recompute_local_impl));  // CheckpointWithoutOutput: fp8 = bool(fp8) there
    CHECK(s.revision("0.20.dev")->crashes(known_crash::layernorm_recompute_local_impl));
    // Every revision that enforces the mhc checks names its switch.
    for (const auto& name : s.revision_names())
        if (enforces(*s.revision(name), "RC016"))
            CHECK(s.revision(name)->enum_values(revision_enum::mhc_connections_field).size() == 1);
}

TEST_CASE("the error rules a revision enforces follow from its compiled checks", "[schema]") {
    const Schema& s = Schema::instance();
    CHECK_FALSE(enforces(*s.revision("0.20.dev"), "RC016"));
    CHECK(enforces(*s.revision("main"), "RC016"));
    CHECK(enforces(*s.revision("0.12"), "RC028"));
    CHECK_FALSE(enforces(*s.revision("0.18"), "RC028"));
    CHECK_FALSE(enforces(*s.revision("0.12"), "RC013"));
}

TEST_CASE("defaults the rules rely on are present", "[schema]") {
    const auto* rev = Schema::instance().revision("0.20.dev");
    auto find = [&](const std::string& f) -> const mbl::Value* {
        for (const auto& [k, v] : rev->defaults)
            if (k == f) return &v;
        return nullptr;
    };
    REQUIRE(find("attention_dropout"));
    CHECK(find("attention_dropout")->as_number() == Approx(0.1));
    CHECK(find("cuda_graph_impl")->as_string() == "none");
    CHECK(find("fp8_recipe")->as_string() == "delayed");
    CHECK(find("recompute_modules")->is_null());
}

TEST_CASE("precision recipes and the field list are loaded", "[schema]") {
    const Schema& s = Schema::instance();
    const auto* r = s.precision_recipe("bf16_with_fp8_current_scaling_mixed");
    REQUIRE(r);
    bool tensorwise = false;
    for (const auto& [k, v] : r->fields) tensorwise |= k == "fp8_recipe" && v.as_string() == "tensorwise";
    CHECK(tensorwise);
    CHECK(s.field("recompute_granularity") != nullptr);
    CHECK(s.field("moe_shared_expert_intermediate_size") != nullptr);
    CHECK(s.field_names().size() > 300);
    CHECK(s.model_catalog().at("models").contains("deepseek-ai/DeepSeek-V3"));
}

TEST_CASE("which revisions have a field comes from Megatron Core's config classes at each one", "[schema]") {
    const Schema& s = Schema::instance();
    const mbl::FieldSpec* hyper = s.field("enable_hyper_connections");
    REQUIRE(hyper);
    // transformer_config.py declares it on the dev branch only (b3b1e2d793c5:1209); main renamed it.
    for (const auto& name : s.revision_names()) CHECK(s.field_exists_at(*hyper, *s.revision(name)) == (name == "dev"));
    CHECK(s.field_history(*hyper) == "it is only in Megatron Core dev");
    const mbl::FieldSpec* mhc = s.field("mhc_recompute_layer_num");
    REQUIRE(mhc);
    CHECK(s.field_history(*mhc) == "it is in Megatron Core dev and later");
    const mbl::FieldSpec* shards = s.field("moe_ncclep_static_shape");
    REQUIRE(shards);
    CHECK(s.field_history(*shards) == "it is in Megatron Core 0.19 to dev, not in 0.20.dev");
    // A field Megatron Core removed (moe_extended_tp, last in 0.16) and no Bridge model class declares exists only up
    // to it. (async_tensor_model_parallel_allreduce, also gone after 0.16, is a field of Bridge's Qwen 2.5 Omni
    // provider, so it exists everywhere.)
    const mbl::FieldSpec* removed = s.field("moe_extended_tp");
    REQUIRE(removed);
    CHECK(s.field_exists_at(*removed, *s.revision("0.16")));
    CHECK_FALSE(s.field_exists_at(*removed, *s.revision("0.17")));
    // A field of a Bridge model class exists at every revision, whatever Megatron Core has (seq_length: Bridge's
    // GPTModelProvider, Megatron Core's GPTModelConfig only from 0.18).
    const mbl::FieldSpec* seq = s.field("seq_length");
    REQUIRE(seq);
    CHECK_FALSE(seq->bridge_source.empty());
    CHECK(s.field_exists_at(*seq, *s.revision("0.12")));
    CHECK_FALSE(s.field("not_a_field_anywhere"));
}

TEST_CASE("a field's type is the one declared at the revision", "[schema]") {
    const Schema& s = Schema::instance();
    const mbl::FieldSpec* scope = s.field("cuda_graph_scope");
    REQUIRE(scope);
    // `cuda_graph_scope: str = "full"` at core_v0.15.0; a Union of strings and lists from 0.16.
    CHECK(s.field_at(*scope, *s.revision("0.15")).type == mbl::FieldType::Str);
    CHECK(s.field_at(*scope, *s.revision("0.20.dev")).type == mbl::FieldType::Any);
    const mbl::FieldSpec* granularity = s.field("recompute_granularity");
    REQUIRE(granularity);
    const mbl::FieldSpec at = s.field_at(*granularity, *s.revision("0.20.dev"));
    CHECK(at.type == mbl::FieldType::Str);
    CHECK(at.nullable);
    CHECK(at.enum_values == std::vector<std::string>{"full", "selective"});
}

TEST_CASE("defaults and labels come from the generated class facts, with the commit they were read at", "[schema]") {
    const Schema& s = Schema::instance();
    for (const auto& name : s.revision_names()) {
        INFO(name);
        const mbl::Revision& r = *s.revision(name);
        REQUIRE(r.classes);
        CHECK(r.labels == r.classes->labels);
        CHECK(r.defaults.size() > 100);
        CHECK_FALSE(r.approximate);
        const std::string commit = r.release.empty() ? r.commit : r.tags.front().second;
        CHECK(r.classes->commit == commit);
        CHECK(r.facts_source().find(commit.substr(0, 12)) != std::string::npos);
    }
    // distribute_saved_activations: `Optional[bool] = None` up to 0.15, `bool = False` from 0.16 (the hand-written
    // defaults said False throughout).
    auto default_of = [&](const char* rev, const char* field) -> const mbl::Value* {
        for (const auto& [k, v] : s.revision(rev)->defaults)
            if (k == field) return &v;
        return nullptr;
    };
    CHECK(default_of("0.15", "distribute_saved_activations")->is_null());
    CHECK(default_of("0.16", "distribute_saved_activations")->as_bool() == false);
    CHECK_FALSE(default_of("0.14", "cuda_graph_impl"));  // no such field before 0.15
}
