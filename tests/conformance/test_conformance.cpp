// Megatron Core's own verdicts on generated configs (tests/data/conformance, see its README): for every in-scope
// row the linter must report at least one error exactly when Megatron Core rejected the config.
#include <yaml-cpp/yaml.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../support/lint_text.hpp"
#include "core/schema.hpp"

using nlohmann::json;

namespace {

// Megatron stops at its first failing check; rows that failed for reasons outside recompute are out of scope.
std::vector<std::string> recompute_fragments() {
    std::ifstream in(std::string(MBRIDGE_LINT_TEST_DATA) + "/data/conformance/README.md");
    std::string line;
    std::vector<std::string> out;
    bool in_list = false;
    while (std::getline(in, line)) {
        if (line.find("Recompute-family message fragments") != std::string::npos) {
            in_list = true;
            continue;
        }
        if (!in_list) continue;
        if (line.rfind("    ", 0) == 0) out.push_back(line.substr(4));
        else if (!out.empty() && !line.empty()) break;
    }
    return out;
}

void emit(YAML::Emitter& out, const json& j) {
    if (j.is_null()) out << YAML::Null;
    else if (j.is_boolean()) out << j.get<bool>();
    else if (j.is_number_integer()) out << j.get<std::int64_t>();
    else if (j.is_number_float()) out << j.get<double>();
    else if (j.is_string()) out << YAML::DoubleQuoted << j.get<std::string>();
    else if (j.is_array()) {
        out << YAML::Flow << YAML::BeginSeq;
        for (const auto& e : j) emit(out, e);
        out << YAML::EndSeq;
    } else {
        out << YAML::BeginMap;
        for (auto it = j.begin(); it != j.end(); ++it) {
            out << YAML::Key << it.key() << YAML::Value;
            emit(out, it.value());
        }
        out << YAML::EndMap;
    }
}

struct Tally {
    int in_scope = 0, agree = 0, ok_rows = 0, error_rows = 0;
};

Tally run_file(const std::string& name) {
    const auto fragments = recompute_fragments();
    REQUIRE(fragments.size() >= 20);
    std::ifstream in(std::string(MBRIDGE_LINT_TEST_DATA) + "/data/conformance/" + name);
    REQUIRE(in.good());
    Tally t;
    std::string line;
    while (std::getline(in, line)) {
        const json row = json::parse(line);
        const bool rejected = row.at("verdict") == "error";
        if (rejected) {
            const std::string message = row.value("message", "");
            bool recompute = false;
            for (const auto& f : fragments) recompute |= message.find(f) != std::string::npos;
            if (!recompute) continue;
        }
        ++t.in_scope;
        (rejected ? t.error_rows : t.ok_rows)++;
        YAML::Emitter yaml;
        yaml << YAML::BeginMap << YAML::Key << "model" << YAML::Value;
        emit(yaml, row.at("model"));
        yaml << YAML::EndMap;

        const std::string mcore = row.at("mcore").get<std::string>();
        REQUIRE(mbl::Schema::instance().revision(mcore) != nullptr);
        const std::string file = row.at("id").get<std::string>() + ".yaml";
        std::vector<std::string> errors;
        for (const auto& d : mbl::test::lint_text(yaml.c_str(), {.mcore = mcore}, file))
            if (d.severity == mbl::Severity::Error) errors.push_back(d.code + " " + d.message);
        const bool agrees = rejected == !errors.empty();
        if (agrees) {
            ++t.agree;
        } else {
            std::ostringstream why;
            why << row.at("id").get<std::string>() << " (" << row.at("mcore").get<std::string>() << "): Megatron Core "
                << (rejected ? "rejected it: " + row.value("message", "") : std::string("accepted it"));
            why << "; linter errors:";
            for (const auto& e : errors) why << "\n  " << e;
            why << "\n" << yaml.c_str();
            UNSCOPED_INFO(why.str());
            CHECK(agrees);
        }
    }
    std::cout << name << ": " << t.agree << "/" << t.in_scope << " in-scope rows agree (" << t.ok_rows << " accepted, "
              << t.error_rows << " rejected)\n";
    return t;
}

}  // namespace

TEST_CASE("agrees with Megatron Core 0.20.dev on every in-scope row", "[conformance]") {
    Tally t = run_file("mcore-0.20.dev.jsonl");
    CHECK(t.in_scope > 1000);
    CHECK(t.agree == t.in_scope);
}

TEST_CASE("agrees with Megatron Core main on every in-scope row", "[conformance]") {
    Tally t = run_file("mcore-main.jsonl");
    CHECK(t.in_scope > 1000);
    CHECK(t.agree == t.in_scope);
}

TEST_CASE("agrees with Megatron Core dev on every in-scope row", "[conformance]") {
    Tally t = run_file("mcore-dev.jsonl");
    CHECK(t.in_scope > 1000);
    CHECK(t.agree == t.in_scope);
}

TEST_CASE("agrees with Megatron Core 0.19 on every in-scope row", "[conformance]") {
    Tally t = run_file("mcore-0.19.jsonl");
    CHECK(t.in_scope > 1000);
    CHECK(t.agree == t.in_scope);
}

TEST_CASE("agrees with Megatron Core 0.16 on every in-scope row", "[conformance]") {
    Tally t = run_file("mcore-0.16.jsonl");
    CHECK(t.in_scope > 1000);
    CHECK(t.agree == t.in_scope);
}

TEST_CASE("every conformance file is read at the revision it names", "[conformance]") {
    for (const char* name :
         {"mcore-0.16.jsonl", "mcore-0.19.jsonl", "mcore-0.20.dev.jsonl", "mcore-main.jsonl", "mcore-dev.jsonl"}) {
        std::ifstream in(std::string(MBRIDGE_LINT_TEST_DATA) + "/data/conformance/" + name);
        std::string line;
        REQUIRE(std::getline(in, line));
        const std::string mcore = json::parse(line).at("mcore").get<std::string>();
        const mbl::Revision* rev = mbl::Schema::instance().revision(mcore);
        REQUIRE(rev != nullptr);
        CHECK(rev->name == mcore);  // a name, not an alias that could later point elsewhere
        CHECK(std::string(name) == "mcore-" + mcore + ".jsonl");
    }
}
