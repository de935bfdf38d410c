// The executor's memo of earlier runs (core/post_init.cpp, memo::): a run that answers like an earlier one takes that
// run's state or outcome, with the places (provenance) of its own answers, never the earlier run's.
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "core/post_init.hpp"
#include "core/schema.hpp"

namespace {

using mbl::Origin;
using mbl::Provenance;
using mbl::SourceRange;
using mbl::Value;
namespace post_init = mbl::post_init;

// A config whose precision section sets bf16 (at file:line) over a model that states bf16=False by default; every
// other name the start-up asks is one the config does not have.
struct Config {
    std::map<std::string, Value, std::less<>> answers;
    Config(const std::string& file, int line, bool bf16) {
        const Provenance at = Provenance::at(Origin::Recipe, SourceRange::point(file, line, 5));
        Value section = Value::map(at);
        section.set("bf16", Value::boolean(bf16, at));
        answers.emplace(std::string(post_init::kSectionLookup) + "mixed_precision", section);
        answers.emplace("mixed_precision.bf16", Value::boolean(bf16, at));
        answers.emplace("bf16", Value::boolean(false, Provenance::default_of("default of Megatron Core")));
    }
    std::optional<post_init::Outcome> run(const post_init::Program& program) const {
        return post_init::run_steps(program,
                                    [this](std::string_view name) -> const Value* {
                                        auto it = answers.find(name);
                                        return it == answers.end() ? nullptr : &it->second;
                                    },
                                    {});
    }
};

// A field's write as it stood when the start-up's validation began (the validation leaves much unknown after it).
const post_init::Rewrite* rewrite_of(const post_init::Outcome& o, const std::string& field) {
    if (!o.rewrites_before_validation) return nullptr;
    for (const auto& r : *o.rewrites_before_validation)
        if (r.field == field) return &r;
    return nullptr;
}

}  // namespace

TEST_CASE("a start-up run that answers like an earlier one keeps its own provenance", "[post_init]") {
    const post_init::Program& bundled = mbl::Schema::instance().bridge_checks();
    post_init::Program program = bundled;  // a copy starts with an empty memo
    REQUIRE_FALSE(program.steps.empty());

    const auto first = Config("a.py", 3, true).run(program);
    const auto second = Config("b.py", 7, true).run(program);  // the same answers, from another line
    post_init::Program fresh_program = bundled;
    const auto fresh = Config("b.py", 7, true).run(fresh_program);  // nothing remembered
    REQUIRE(first);
    REQUIRE(second);
    REQUIRE(fresh);

    const post_init::Rewrite* a = rewrite_of(*first, "bf16");
    const post_init::Rewrite* b = rewrite_of(*second, "bf16");
    const post_init::Rewrite* f = rewrite_of(*fresh, "bf16");
    REQUIRE(a);
    REQUIRE(b);
    REQUIRE(f);
    CHECK(a->after.as_bool());
    CHECK(a->after.prov().range.file == "a.py");
    CHECK(b->after.as_bool());
    CHECK(b->after.prov().range.file == "b.py");
    CHECK(b->after.prov().range.line == 7);

    // The remembered run's outcome is the fresh run's, field by field and place by place.
    auto same_rewrites = [](const std::vector<post_init::Rewrite>& xs, const std::vector<post_init::Rewrite>& ys) {
        REQUIRE(xs.size() == ys.size());
        for (std::size_t i = 0; i < ys.size(); ++i) {
            CHECK(xs[i].field == ys[i].field);
            CHECK(xs[i].after.same_as(ys[i].after));
            CHECK(xs[i].after.prov().range.file == ys[i].after.prov().range.file);
            CHECK(xs[i].after.prov().range.line == ys[i].after.prov().range.line);
            CHECK(xs[i].line == ys[i].line);
        }
    };
    same_rewrites(second->rewrites, fresh->rewrites);
    same_rewrites(*second->rewrites_before_validation, *fresh->rewrites_before_validation);
    REQUIRE(second->events.size() == fresh->events.size());
    for (std::size_t i = 0; i < fresh->events.size(); ++i) {
        CHECK(second->events[i].site - program.sites.data() == fresh->events[i].site - fresh_program.sites.data());
        CHECK(second->events[i].certain == fresh->events[i].certain);
        CHECK(second->events[i].message == fresh->events[i].message);
    }

    // Another answer takes another path: no copy of bf16 where the preset leaves it False.
    const auto other = Config("a.py", 3, false).run(program);
    REQUIRE(other);
    CHECK(rewrite_of(*other, "bf16") == nullptr);
}
