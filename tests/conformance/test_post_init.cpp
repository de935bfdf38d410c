// Megatron Core's compiled __post_init__ (core/post_init.hpp, the compiled checks of schemas/mcore/facts/) against Megatron Core's own
// verdicts (tests/data/conformance): every row, whatever the reason it was rejected for. Megatron Core stops at its
// first raise; the program's first certain raise must be that one (same message), and an accepted config must get
// no certain raise, with the fields __post_init__ rewrote equal to what Megatron Core left.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "core/effective_model.hpp"
#include "core/schema.hpp"
#include "rules/megatron_raises.hpp"
#include "rules/registry.hpp"

using nlohmann::json;

namespace {

struct PostInitTally {
    int rows = 0, environment = 0, verdicts = 0, possible = 0, messages_checked = 0, messages = 0;
    std::vector<std::string> misses;
};

std::string first_line(const std::string& s) { return s.substr(0, std::min<std::size_t>(s.size(), 400)); }

// A message with the items of each {...} set sorted: Python prints a set in hash order.
std::string sorted_sets(const std::string& s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '{') {
            out += s[i];
            continue;
        }
        const auto close = s.find('}', i);
        if (close == std::string::npos) {
            out += s.substr(i);
            break;
        }
        std::vector<std::string> items;
        std::string item;
        for (std::size_t j = i + 1; j < close; ++j) {
            if (s[j] == ',') {
                items.push_back(item);
                item.clear();
            } else if (s[j] != ' ') {
                item += s[j];
            }
        }
        items.push_back(item);
        std::sort(items.begin(), items.end());
        out += "{";
        for (std::size_t k = 0; k < items.size(); ++k) out += (k ? ", " : "") + items[k];
        out += "}";
        i = close;
    }
    return out;
}

// Megatron Core's message as the verdict file keeps it (cut at 400 characters).
bool same_message(const std::string& ours, const std::string& theirs) {
    if (ours == theirs) return true;
    if (theirs.size() >= 399)
        return ours.rfind(theirs.substr(0, 390), 0) == 0 ||
               sorted_sets(ours).rfind(sorted_sets(theirs.substr(0, 300)).substr(0, 250), 0) == 0;
    return sorted_sets(ours) == sorted_sets(theirs);
}

PostInitTally run_rows(const std::filesystem::path& file) {
    PostInitTally t;
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line)) {
        const json row = json::parse(line);
        const mbl::Revision* rev = mbl::Schema::instance().revision(row.at("mcore").get<std::string>());
        REQUIRE(rev != nullptr);
        REQUIRE(rev->classes->check_program() != nullptr);
        mbl::Value root = mbl::Value::map();
        root.set("model", mbl::value_from_json(row.at("model"), {}));
        const std::string message = row.value("message", "");
        // Rows where Megatron Core failed on the recording machine's missing Transformer Engine (is_te_min_version
        // comparing None at 0.16) say nothing about a job, which always has it.
        if (message.find("not supported between instances of 'NoneType' and 'Version'") != std::string::npos) {
            ++t.environment;
            continue;
        }
        // The verdicts were recorded without Transformer Engine (Megatron Core reports its version as 0.0.0) and with
        // PyTorch 2.11.
        mbl::post_init::JobFacts facts;
        facts.te_version = "0.0.0";
        facts.torch_version = "2.11.0";
        auto fin = mbl::finalize(root, *rev, {}, nullptr, {}, facts);
        REQUIRE(fin.model.post_init != nullptr);
        ++t.rows;
        const mbl::post_init::Event* first = nullptr;    // the first raise reached, certain or possible
        const mbl::post_init::Event* certain = nullptr;  // the first certain raise
        for (const auto& e : fin.model.post_init->events) {
            if (e.site->kind != mbl::post_init::Site::Kind::Raise) continue;
            if (!first) first = &e;
            if (e.certain && !certain) certain = &e;
        }
        const bool rejected = row.at("verdict") == "error";
        auto where = [](const mbl::post_init::Event* e) {
            return fmt::format("{}{}:{} {}", e->certain ? "" : "possible ", e->site->file, e->site->line,
                               e->certain ? first_line(e->message) : "(" + e->why_uncertain + ")");
        };
        std::string why;
        if (rejected == (certain != nullptr)) {
            ++t.verdicts;
            // Megatron Core stops at its first raise: where ours is certain, the messages must be the same.
            if (!rejected || !first->certain) continue;
            ++t.messages_checked;
            if (same_message(first->message, message)) {
                ++t.messages;
                continue;
            }
            why = fmt::format("rejected at {}:{}: {}\n    ours: {}", row.value("raise_file", ""),
                              row.value("raise_line", 0), message, where(first));
        } else if (rejected) {
            if (first) ++t.possible;
            why = fmt::format("rejected at {}:{}: {}\n    ours: {}", row.value("raise_file", ""),
                              row.value("raise_line", 0), message, first ? where(first) : "accepted");
        } else {
            why = fmt::format("accepted; ours: {}", where(certain));
        }
        t.misses.push_back(
            fmt::format("{} {}: {}", row.at("mcore").get<std::string>(), row.at("id").get<std::string>(), why));
    }
    return t;
}

}  // namespace

TEST_CASE("the compiled __post_init__ gives Megatron Core's verdict on every recorded config", "[conformance]") {
    const std::filesystem::path dir = std::filesystem::path(MBRIDGE_LINT_TEST_DATA) / "data" / "conformance";
    int files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        if (entry.path().extension() != ".jsonl") continue;
        ++files;
        PostInitTally t = run_rows(entry.path());
        std::cout << entry.path().filename().string() << ": " << t.verdicts << "/" << t.rows << " verdicts agree ("
                  << t.possible << " rejections only possible), " << t.messages << "/" << t.messages_checked
                  << " first raises with Megatron Core's message; " << t.environment
                  << " rows rejected for the recording machine's missing Transformer Engine left out\n";
        for (std::size_t i = 0; i < t.misses.size() && i < 40; ++i) std::cout << "  " << t.misses[i] << "\n";
        CHECK(t.rows > 1000);
        CHECK(t.verdicts == t.rows);
        CHECK(t.messages == t.messages_checked);
    }
    CHECK(files >= 2);
}

// The named rules are the user's vocabulary for Megatron Core's raises: each is tied to the raise sites it explains
// (RuleInfo::raise_text), which decides the revisions that enforce it, and every raise site whose guard reads a
// recompute, offloading, CUDA-graph, MoE-recompute or hyper-connection field has a named rule.
TEST_CASE("every named rejection is tied to Megatron Core's raise sites, and every recompute raise has a rule",
          "[conformance]") {
    // By name, so that a field a new revision adds to one of these families is held to the same promise.
    auto in_scope = [](const std::string& field) {
        for (const char* part :
             {"recompute", "distribute_saved_activations", "offload", "cuda_graph", "mhc", "hyper_connection"})
            if (field.find(part) != std::string::npos) return true;
        return false;
    };
    int sites_checked = 0;
    std::map<std::string, std::vector<std::string>> enforced;  // rule -> the revisions whose checks have its sites
    for (const auto& name : mbl::Schema::instance().revision_names()) {
        const mbl::Revision* rev = mbl::Schema::instance().revision(name);
        REQUIRE(rev != nullptr);
        REQUIRE(rev->classes->check_program() != nullptr);
        const auto& program = *rev->classes->check_program();
        for (const auto& rule : mbl::all_rules()) {
            const mbl::RuleInfo& info = rule->info();
            if (!info.is_rejection()) continue;
            if (mbl::enforced_at(info, *rev)) enforced[std::string(info.code)].push_back(name);
        }
        for (const auto& site : program.sites) {
            if (site.kind != mbl::post_init::Site::Kind::Raise) continue;
            if (std::none_of(site.reads.begin(), site.reads.end(), in_scope)) continue;
            ++sites_checked;
            bool named = false;
            for (const auto& rule : mbl::all_rules())
                named |= rule->info().is_rejection() && !rule->info().raise_text.empty() &&
                         mbl::explains(rule->info(), site);
            INFO(name << " " << site.file << ":" << site.line << " (" << site.text
                      << ") reads a recompute, offloading, CUDA-graph or hyper-connection field");
            CHECK(named);
        }
    }
    CHECK(sites_checked > 300);
    // Megatron Bridge's start-up (schemas/bridge/checks.json: its comm-overlap setup and ConfigContainer.validate with
    // the functions it calls) is held to the same promise, and RC027's Bridge branch has the site it is tied to.
    std::map<std::string, int> bridge_sites;  // "CommOverlapConfig" or "ConfigContainer" -> raise sites in scope
    for (const auto& site : mbl::Schema::instance().bridge_checks().sites) {
        if (site.kind != mbl::post_init::Site::Kind::Raise) continue;
        if (std::none_of(site.reads.begin(), site.reads.end(), in_scope)) continue;
        bool named = false;
        for (const auto& rule : mbl::all_rules())
            named |=
                rule->info().is_rejection() && !rule->info().raise_text.empty() && mbl::explains(rule->info(), site);
        ++bridge_sites[site.function.substr(0, site.function.find('.'))];
        INFO("Megatron Bridge " << site.file << ":" << site.line << " (" << site.text
                                << ") reads a recompute, offloading, CUDA-graph or hyper-connection field");
        CHECK(named);
    }
    // recompute_granularity, recompute_method, recompute_num_layers, recompute_modules
    CHECK(bridge_sites["CommOverlapConfig"] == 4);
    // offline packing's two CUDA-graph checks, Energon packing with graphs, Megatron-FSDP v2's three
    CHECK(bridge_sites["ConfigContainer"] == 6);
    // A named rule no revision's source has a raise site for would never run: its raise_text is stale or misspelt.
    for (const auto& rule : mbl::all_rules()) {
        const mbl::RuleInfo& info = rule->info();
        if (!info.is_rejection()) continue;
        INFO(info.code << " is enforced at no revision: its raise_text matches no raise site");
        CHECK(enforced.count(std::string(info.code)) == 1);
    }
    // Where a check arrived and went, as the compiled sources say (the example: RC021 is in core_v0.19.0).
    CHECK(enforced["RC021"].front() == "0.19");
    CHECK(enforced["RC028"].back() == "0.15");
}
