// memory/labels/: every recompute label of every Megatron Core revision in schemas/ is either modelled (one file in
// memory/labels/, registered in labels.def) or declared unmodelled with a reason; the modelled ones agree with the
// schemas on which checkpoints discard their output.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "core/schema.hpp"
#include "memory/labels/registry.hpp"
#include "memory/layer_model.hpp"

using namespace mbl;

TEST_CASE("the schemas' labels are the modelled labels plus the labels declared unmodelled", "[memory][labels]") {
    std::set<std::string> schema_labels;
    for (const auto& name : Schema::instance().revision_names())
        for (const auto& label : Schema::instance().revision(name)->labels) schema_labels.insert(label);
    std::set<std::string> declared;
    for (const auto* label : memory::labels::modeled()) {
        INFO(label->name);
        CHECK(declared.insert(std::string(label->name)).second);  // each once
        CHECK(label->apply);
        CHECK(label->backward_extra);
        CHECK(label->replays);
        CHECK(!label->drops.empty());
    }
    for (const auto& label : memory::labels::unmodeled()) {
        INFO(label.name);
        CHECK(declared.insert(std::string(label.name)).second);
        CHECK(!label.why.empty());
    }
    CHECK(declared == schema_labels);
    // The estimator offers exactly the modelled ones, in the registry's order.
    REQUIRE(memory::modeled_labels().size() == memory::labels::modeled().size());
    for (std::size_t i = 0; i < memory::modeled_labels().size(); ++i)
        CHECK(memory::modeled_labels()[i] == memory::labels::modeled()[i]->name);
}

TEST_CASE("a modelled label discards its output exactly where the schemas say Megatron Core does", "[memory][labels]") {
    for (const auto& name : Schema::instance().revision_names()) {
        const Revision& rev = *Schema::instance().revision(name);
        for (const auto* label : memory::labels::modeled()) {
            if (!rev.has_label(label->name)) continue;
            INFO(rev.name << " " << label->name);
            CHECK(rev.discards_output(label->name) == label->output_discarding);
        }
    }
}

TEST_CASE("a label the estimate does not model has no effect on the estimate", "[memory][labels]") {
    memory::LayerShape s;
    s.seq_length = 1024;
    s.hidden = 1024;
    s.heads = 8;
    s.query_groups = 8;
    s.head_dim = 128;
    s.ffn_hidden = 4096;
    const auto plain = memory::layer_activations(s, memory::LayerKind::Dense, {});
    for (const auto& label : memory::labels::unmodeled()) {
        const auto with = memory::layer_activations(s, memory::LayerKind::Dense, {std::string(label.name)});
        CHECK(with.internal_bytes() == plain.internal_bytes());
        CHECK(with.ignored_labels.empty());  // not reported as acting on nothing either: it is not modelled
    }
}
