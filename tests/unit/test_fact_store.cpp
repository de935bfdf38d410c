// The store of Megatron Core facts by commit (core/fact_store.hpp, schemas/mcore/facts/): every commit decodes into
// documents the linter can run, the named revisions' commits decode into exactly their bundled files, and a commit
// with facts of its own is checked by them, not by the nearest revision's.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <set>

#include "core/config_classes.hpp"
#include "core/fact_store.hpp"
#include "core/post_init.hpp"
#include "core/schema.hpp"
#include "rules/megatron_raises.hpp"
#include "rules/registry.hpp"

using nlohmann::json;
namespace fact_store = mbl::fact_store;

namespace {

// Every statement's line is positive, every call names a function of the program, and every site is named by one
// statement whose line is at or before it.
struct Walk {
    const json& functions;
    std::size_t site_count;
    std::vector<int> named;  // per site, how many statements name it
    std::vector<std::string> problems;

    void expr(const json& e, const std::string& where) {
        if (e.is_object()) {
            if (e.value("o", "") == "call" && !functions.contains(e.value("n", "")))
                problems.push_back(where + " calls " + e.value("n", "") + ", which the program lacks");
            for (const auto& [key, kid] : e.items()) expr(kid, where);
        } else if (e.is_array()) {
            for (const auto& kid : e) expr(kid, where);
        }
    }

    void block(const json& statements, const std::string& fn) {
        for (const auto& s : statements) {
            const long line = s.at("l").get<long>();
            const std::string where = fn + " line " + std::to_string(line);
            if (line <= 0) problems.push_back(where + ": line not positive");
            if (s.contains("e")) expr(s.at("e"), where);
            for (const char* key : {"b", "x"})
                if (s.contains(key)) block(s.at(key), fn);
            if (s.contains("site")) {
                const auto site = s.at("site").get<std::size_t>();
                if (site >= site_count) problems.push_back(where + ": no site " + std::to_string(site));
                else ++named[site];
            }
        }
    }
};

std::vector<std::string> problems_of(const json& program) {
    const json& functions = program.at("functions");
    Walk walk{functions, program.at("sites").size(), std::vector<int>(program.at("sites").size(), 0), {}};
    for (const auto& [name, f] : functions.items()) walk.block(f.at("body"), name);
    for (const auto& [cls, fn] : program.at("entries").items())
        if (!functions.contains(fn.get<std::string>())) walk.problems.push_back(cls + "'s entry is missing");
    for (std::size_t i = 0; i < walk.named.size(); ++i) {
        const json& site = program.at("sites").at(i);
        if (walk.named[i] != 1)
            walk.problems.push_back("site " + std::to_string(i) + " is named " + std::to_string(walk.named[i]) +
                                    " times");
        if (site.at("line").get<long>() <= 0)
            walk.problems.push_back("site " + std::to_string(i) + ": line not positive");
        if (!functions.contains(site.at("function").get<std::string>()))
            walk.problems.push_back("site " + std::to_string(i) + "'s function is missing");
    }
    return walk.problems;
}

json bundled(const std::string& path) { return json::parse(mbl::schema_file(path).value()); }

}  // namespace

TEST_CASE("every commit of the fact store decodes into classes and checks the linter runs", "[schema][facts]") {
    const auto& rows = fact_store::rows();
    REQUIRE(rows.size() > 300);
    std::set<std::string> commits, names;
    for (const auto& row : rows) {
        INFO(row.name << " " << row.commit);
        CHECK(commits.insert(row.commit).second);
        CHECK(names.insert(row.name).second);
        CHECK(row.commit.size() == 40);
        CHECK(mbl::Schema::instance().revision(row.base) != nullptr);
        const json checks = fact_store::checks(row);
        CHECK(checks.at("commit") == row.commit);
        CHECK(problems_of(checks) == std::vector<std::string>{});
        const auto program = mbl::post_init::Program::from_json(checks);
        CHECK(program.entries.contains("TransformerConfig"));
        const auto classes = mbl::ClassFacts::from_json(fact_store::classes(row));
        REQUIRE(classes.find("TransformerConfig") != nullptr);
        std::vector<std::string> unplaced;  // a class or field without a positive line
        for (const auto& c : classes.classes) {
            if (c.line <= 0) unplaced.push_back(c.name);
            for (const auto& f : c.fields)
                if (f.line <= 0) unplaced.push_back(c.name + "." + f.name);
        }
        CHECK(unplaced == std::vector<std::string>{});
    }
}

TEST_CASE("each named revision's commit is in the store, whose checks the revision runs", "[schema][facts]") {
    const mbl::Schema& schema = mbl::Schema::instance();
    for (const auto& name : schema.revision_names()) {
        INFO(name);
        const mbl::Revision* rev = schema.revision(name);
        const std::string commit = rev->commit.empty() ? rev->tags.front().second : rev->commit;
        const fact_store::Row* row = fact_store::find(commit);
        REQUIRE(row != nullptr);
        // The revision's compiled checks are the store's (core/schema.cpp): they parse, and name __post_init__'s
        // entry for TransformerConfig.
        const auto checks = fact_store::checks(*row);
        CHECK(checks.at("entries").contains("TransformerConfig"));
        const mbl::post_init::Program* program = rev->classes->check_program();
        REQUIRE(program != nullptr);
        CHECK(program->entries.count("TransformerConfig") == 1);
        CHECK(program->sites.size() == checks.at("sites").size());
        const json classes = fact_store::classes(*row), want = bundled("mcore/classes/" + name + ".json");
        for (const char* key : {"package_version", "recompute", "classes"}) CHECK(classes.at(key) == want.at(key));
        CHECK(schema.revision(commit) == rev);  // the named revision, not a copy made from the store
    }
}

// Megatron-LM's offload/recompute check (RC021) arrived in commit 69c486825c (2026-07-02) and is in core_v0.19.0;
// 002255075c (2026-06-13, main, numbered 0.19.0) is pinned by a Megatron Bridge branch, so the store has its facts.
TEST_CASE("a stored commit between two named revisions is checked by its own facts", "[schema][facts]") {
    const mbl::Schema& schema = mbl::Schema::instance();
    const mbl::Revision* before = schema.revision("002255075c3728fded9a2e435677840b08560d55");
    REQUIRE(before != nullptr);
    CHECK(before->name == "002255075c37");
    CHECK_FALSE(before->approximate);
    CHECK(before->commit == "002255075c3728fded9a2e435677840b08560d55");
    CHECK(before->classes->commit == before->commit);
    CHECK(before->classes->check_program()->commit == before->commit);
    CHECK(schema.revision("002255075c37") == before);
    const auto& rc021 = mbl::find_rule("RC021")->info();
    CHECK_FALSE(mbl::enforced_at(rc021, *before));
    CHECK(mbl::enforced_at(rc021, *schema.revision("core_v0.19.0")));
    // A patch release with facts of its own is that release, not the one its named revision was read from.
    const mbl::Revision* patch = schema.revision("core_v0.18.2");
    REQUIRE(patch != nullptr);
    CHECK(patch->name == "core_v0.18.2");
    CHECK(patch->release == "core_v0.18.2");
    CHECK(patch->commit != schema.revision("0.18")->tags.front().second);
    CHECK(schema.revision("0.18.2") == patch);
}
