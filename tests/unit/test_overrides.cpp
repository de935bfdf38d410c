// The Hydra-style override grammar and Megatron Bridge's override semantics.
#include <catch2/catch.hpp>
#include <cmath>

#include "core/schema.hpp"
#include "parser/overrides.hpp"
#include "parser/yaml_loader.hpp"

namespace {

mbl::Override parse(const std::string& text) {
    auto p = mbl::parse_override("<override 1>", text);
    if (p.error) FAIL("unexpected error: " << p.error->message);
    return *p.override;
}

mbl::Diagnostic parse_error(const std::string& text) {
    auto p = mbl::parse_override("<override 1>", text);
    REQUIRE(p.error);
    return *p.error;
}

const mbl::Revision& rev() { return *mbl::Schema::instance().revision("0.20.dev"); }

mbl::Value tree() {
    auto loaded = mbl::load_yaml("cfg.yaml", "model:\n  recompute_granularity: selective\n  num_layers: 4\n"
                                             "train:\n  micro_batch_size: 1\n");
    REQUIRE(loaded.ok());
    return loaded.root;
}

std::vector<mbl::Diagnostic> apply(mbl::Value& root, const std::vector<std::string>& texts) {
    std::vector<mbl::Override> overrides;
    for (const auto& t : texts) overrides.push_back(parse(t));
    std::vector<mbl::Diagnostic> errors;
    mbl::apply_overrides(root, overrides, rev(), errors);
    return errors;
}

}  // namespace

TEST_CASE("override kinds, keys and values", "[overrides]") {
    auto o = parse("model.recompute_granularity=full");
    CHECK(o.kind == mbl::Override::Kind::Set);
    CHECK(o.path == std::vector<std::string>{"model", "recompute_granularity"});
    CHECK(o.value->as_string() == "full");
    CHECK(parse("+model.x=1").kind == mbl::Override::Kind::Add);
    CHECK(parse("++model.x=1").kind == mbl::Override::Kind::ForceAdd);
    CHECK(parse("~model.x").kind == mbl::Override::Kind::Delete);
    CHECK_FALSE(parse("~model.x").value);
    CHECK(parse("~model.x=3").value->as_int() == 3);

    CHECK(parse("a=null").value->is_null());
    CHECK(parse("a=NULL").value->is_null());
    CHECK(parse("a=true").value->as_bool());
    CHECK_FALSE(parse("a=False").value->as_bool());
    CHECK(parse("a=42").value->as_int() == 42);
    CHECK(parse("a=-7").value->as_int() == -7);
    CHECK(parse("a=1_000").value->as_int() == 1000);
    CHECK(parse("a=1e-3").value->as_number() == Approx(0.001));
    CHECK(parse("a=0.5").value->is_float());
    CHECK(std::isinf(parse("a=inf").value->as_number()));
    CHECK(parse("a=uniform").value->as_string() == "uniform");
    CHECK(parse("a='x, y'").value->as_string() == "x, y");
    CHECK(parse("a=\"null\"").value->as_string() == "null");
    CHECK(parse("a=").value->as_string().empty());
    CHECK(parse("a=torch.bfloat16").value->as_string() == "torch.bfloat16");
    CHECK(parse("a=0.20.dev").value->as_string() == "0.20.dev");

    auto list = parse("model.recompute_modules=[core_attn, 'mlp', 3]");
    REQUIRE(list.value->is_list());
    REQUIRE(list.value->items().size() == 3);
    CHECK(list.value->items()[0].as_string() == "core_attn");
    CHECK(list.value->items()[1].as_string() == "mlp");
    CHECK(list.value->items()[2].as_int() == 3);
    CHECK(list.value->items()[1].prov().range.column == 37);  // each element points at itself
    CHECK(parse("a=[]").value->items().empty());
    auto dict = parse("a={k: 1, nested: {x: [true]}}");
    REQUIRE(dict.value->is_map());
    CHECK(dict.value->find("k")->as_int() == 1);
    CHECK(dict.value->find("nested")->find("x")->items()[0].as_bool());

    CHECK(o.value->prov().origin == mbl::Origin::Override);
    CHECK(o.value->prov().range.file == "<override 1>");
    CHECK(o.value->prov().range.column == 29);
}

TEST_CASE("malformed overrides are located errors", "[overrides]") {
    auto e = parse_error("model.recompute_granularity");
    CHECK(e.code == "IN007");
    CHECK(e.range.file == "<override 1>");
    CHECK(e.range.column == 28);
    CHECK(parse_error("model..x=1").range.column == 7);
    CHECK(parse_error("=1").range.column == 1);
    CHECK(parse_error("a=[1, 2").message.find("never closed") != std::string::npos);
    CHECK(parse_error("a='open").message.find("never closed") != std::string::npos);
    CHECK(parse_error("a=1,2").message.find("sweep") != std::string::npos);
    CHECK(parse_error("a=choice(1,2)").message.find("choice()") != std::string::npos);
    CHECK(parse_error("a={k 1}").message.find(":") != std::string::npos);
    CHECK(parse_error("a b=1").range.column == 2);
    CHECK(parse_error("a=[1] x").range.column == 7);
    std::string deep = "a=" + std::string(100, '[') + std::string(100, ']');
    CHECK(parse_error(deep).message.find("deep") != std::string::npos);
}

TEST_CASE("override semantics follow Megatron Bridge", "[overrides]") {
    SECTION("a plain set needs the key: model fields of the revision and config sections exist") {
        auto root = tree();
        CHECK(apply(root, {"model.recompute_granularity=full", "model.recompute_method=uniform",
                           "train.micro_batch_size=2", "mixed_precision=bf16_mixed"})
                  .empty());
        CHECK(root.find("model")->find("recompute_granularity")->as_string() == "full");
        CHECK(root.find("model")->find("recompute_method")->as_string() == "uniform");
        CHECK(root.find("model")->find("recompute_method")->prov().origin == mbl::Origin::Override);
        CHECK(root.find("train")->find("micro_batch_size")->as_int() == 2);
        CHECK(root.find("mixed_precision")->as_string() == "bf16_mixed");
    }
    SECTION("a plain set of a key the config lacks is an error with a suggestion") {
        auto root = tree();
        auto errors = apply(root, {"model.recompute_granularty=full"});
        REQUIRE(errors.size() == 1);
        CHECK(errors[0].code == "IN004");
        CHECK(errors[0].message.find("did you mean \"recompute_granularity\"") != std::string::npos);
        CHECK(errors[0].range.file == "<override 1>");
        auto section = apply(root, {"modle.num_layers=2"});
        REQUIRE(section.size() == 1);
        CHECK(section[0].message.find("\"model\"") != std::string::npos);
    }
    SECTION("a model key close to no known field may be the provider's own: the linter cannot refuse it") {
        auto root = tree();
        CHECK(apply(root, {"model.scale_factor=16.0"}).empty());  // Llama 3.1's provider declares it
        CHECK(root.find("model")->find("scale_factor")->as_number() == 16.0);
    }
    SECTION("+ adds only new keys, ++ adds or replaces") {
        auto root = tree();
        auto errors = apply(root, {"+model.num_layers=8"});
        REQUIRE(errors.size() == 1);
        CHECK(errors[0].code == "IN007");
        CHECK(apply(root, {"+train.new_key=1", "++model.num_layers=8", "++train.other=x"}).empty());
        CHECK(root.find("model")->find("num_layers")->as_int() == 8);
        CHECK(root.find("train")->find("new_key")->as_int() == 1);
    }
    SECTION("~ deletes; deleting None or a missing key is an error") {
        auto root = tree();
        CHECK(apply(root, {"~model.num_layers"}).empty());
        CHECK_FALSE(root.find("model")->find("num_layers"));
        auto none = apply(root, {"~model.recompute_method"});  // not set: the default is None
        REQUIRE(none.size() == 1);
        CHECK(none[0].message.find("None") != std::string::npos);
        auto missing = apply(root, {"~train.nothing_here"});
        REQUIRE(missing.size() == 1);
        auto mismatch = apply(root, {"~model.recompute_granularity=full"});
        REQUIRE(mismatch.size() == 1);
        CHECK(mismatch[0].message.find("not \"full\"") != std::string::npos);
        CHECK(apply(root, {"~model.recompute_granularity=selective"}).empty());
    }
    SECTION("precedence: later overrides win; a YAML file merges before them") {
        auto root = tree();
        auto file = mbl::load_yaml("over.yaml", "model:\n  recompute_granularity: full\n  recompute_method: block\n",
                                   mbl::Origin::Override);
        REQUIRE(file.ok());
        mbl::merge_config_tree(root, file.root);
        CHECK(root.find("model")->find("recompute_granularity")->as_string() == "full");
        CHECK(root.find("model")->find("recompute_granularity")->prov().range.file == "over.yaml");
        CHECK(root.find("model")->find("num_layers")->as_int() == 4);  // kept: maps merge key by key
        CHECK(apply(root, {"model.recompute_method=uniform", "model.recompute_method=block"}).empty());
        CHECK(root.find("model")->find("recompute_method")->as_string() == "block");
    }
}
