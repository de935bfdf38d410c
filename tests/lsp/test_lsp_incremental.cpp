// The editor server on Python recipes keeps what it read for its whole session: an edit to a recipe re-reads that
// recipe alone, an edit to a helper re-lints the open recipes that import it, files created on disk are found once
// the client reports them, and publishing grows linearly with the number of problems. The server runs in this
// process, with the real Python front end, so that the read counters (pyeval/module_index.hpp) can be checked.
#include <catch2/catch.hpp>

#include <thread>

#include "../support/lsp_client.hpp"
#include "../support/temp_dir.hpp"
#include "integrations/lsp/server.hpp"
#include "pyeval/module_index.hpp"

using json = nlohmann::json;
using namespace std::chrono_literals;

namespace {

// A server on a pipe pair, in a thread; shut down and joined when the test ends.
class InProcessServer {
public:
    InProcessServer() {
        int to_server[2], from_server[2];
        if (pipe(to_server) != 0 || pipe(from_server) != 0) throw std::runtime_error("pipe failed");
        signal(SIGPIPE, SIG_IGN);
        in_ = to_server[0];
        out_ = from_server[1];
        thread_ = std::thread([this] {
            mbl::lsp::ServerOptions options;
            options.debounce = 0ms;
            options.mcore = "0.20.dev";
            options.max_message_bytes = 1u << 26;
            mbl::lsp::Server server(options, in_, out_);
            server.run();
            close(out_);
        });
        client_.emplace(to_server[1], from_server[0]);
    }
    ~InProcessServer() {
        client_->close_input();  // ends the server's loop
        if (thread_.joinable()) thread_.join();
        close(in_);
    }
    mbl::test::LspClient& client() { return *client_; }

    void initialize(json capabilities = json::object()) {
        const int id = client_->request("initialize", {{"capabilities", std::move(capabilities)}});
        REQUIRE(client_->response(id));
        client_->notify("initialized", json::object());
    }
    void open(const std::string& path, const std::string& text, const std::string& language = "python") {
        client_->notify(
            "textDocument/didOpen",
            {{"textDocument",
              {{"uri", mbl::lsp::path_to_uri(path)}, {"languageId", language}, {"version", 1}, {"text", text}}}});
    }
    void replace(const std::string& path, int version, const std::string& text) {
        client_->notify("textDocument/didChange",
                        {{"textDocument", {{"uri", mbl::lsp::path_to_uri(path)}, {"version", version}}},
                         {"contentChanges", json::array({{{"text", text}}})}});
    }
    // The diagnostics published for `path` at `version` (any version when -1), once the server has done the rest of
    // that lint's work (the imports it watches are scanned a moment after publishing), so that the read counters are
    // still.
    json diagnostics(const std::string& path, int version = -1) {
        auto m = client_->diagnostics(mbl::lsp::path_to_uri(path), version);
        REQUIRE(m);
        const auto& c = mbl::lsp::publish_counters();
        for (auto waited = 0ms; c.work_finished.load() != c.work_started.load() && waited < 20s; waited += 1ms)
            std::this_thread::sleep_for(1ms);
        return (*m)["params"]["diagnostics"];
    }

private:
    int in_ = -1, out_ = -1;
    std::thread thread_;
    std::optional<mbl::test::LspClient> client_;
};

bool has_code(const json& diagnostics, const std::string& code) {
    for (const auto& d : diagnostics)
        if (d["code"] == code) return true;
    return false;
}

const std::string kImports = "from megatron.bridge.models import GPTModelProvider\n"
                             "from megatron.bridge.training.config import ConfigContainer\n";

// A package with a helper, a recipe using it, and a leaf recipe that imports a chain of other modules.
struct Package {
    mbl::test::TempDir dir;
    std::string helper =
        dir.write("pkg/helper.py", "def apply(cfg):\n    cfg.model.recompute_granularity = \"selective\"\n");
    std::string recipe = dir.write(
        "pkg/recipe.py",
        kImports +
            "from pkg.helper import apply\n\n\n"
            "def a_config() -> ConfigContainer:\n"
            "    cfg = ConfigContainer(model=GPTModelProvider(num_layers=4, hidden_size=64, num_attention_heads=4))\n"
            "    apply(cfg)\n"
            "    cfg.model.recompute_num_layers = 2\n"
            "    return cfg\n");
    Package() {
        dir.write("pkg/__init__.py", "");
        // Ten modules, each importing the next, all read by the leaf recipe.
        for (int i = 0; i < 10; ++i)
            dir.write(
                "pkg/chain" + std::to_string(i) + ".py",
                (i < 9 ? "from pkg.chain" + std::to_string(i + 1) + " import LAYERS\n" : std::string("LAYERS = 4\n")) +
                    "VALUE_" + std::to_string(i) + " = LAYERS\n");
    }
    std::string leaf_text(const std::string& method) const {
        return kImports +
               "from pkg.chain0 import VALUE_0\n\n\n"
               "def leaf_config() -> ConfigContainer:\n"
               "    cfg = ConfigContainer(model=GPTModelProvider(num_layers=VALUE_0, hidden_size=64, num_attention_heads=4))\n"
               "    cfg.model.recompute_granularity = \"full\"\n" +
               method + "    cfg.model.recompute_num_layers = 1\n    return cfg\n";
    }
};

}  // namespace

TEST_CASE("an edit to a recipe that nothing imports re-reads that recipe alone", "[lsp][python][incremental]") {
    Package p;
    const std::string leaf = p.dir.write("pkg/leaf.py", p.leaf_text(""));
    InProcessServer s;
    s.initialize();
    s.open(leaf, p.leaf_text(""));
    CHECK(has_code(s.diagnostics(leaf, 1), "RC004"));  // full without a method

    auto& counters = mbl::py::read_counters();
    const auto read = counters.files_read.load(), parsed = counters.files_parsed.load(),
               scanned = counters.imports_scanned.load();
    s.replace(leaf, 2, p.leaf_text("    cfg.model.recompute_method = \"uniform\"\n"));
    CHECK_FALSE(has_code(s.diagnostics(leaf, 2), "RC004"));
    CHECK(counters.files_read == read);          // nothing from disk: the chain and the package are kept
    CHECK(counters.files_parsed == parsed + 1);  // the recipe's new text
    CHECK(counters.imports_scanned == scanned + 1);

    s.replace(leaf, 3, p.leaf_text(""));  // and back
    CHECK(has_code(s.diagnostics(leaf, 3), "RC004"));
    CHECK(counters.files_read == read);
    CHECK(counters.files_parsed == parsed + 2);
}

TEST_CASE("an edit to a helper re-lints the open recipes that import it, and re-reads only them",
          "[lsp][python][incremental]") {
    Package p;
    const std::string leaf = p.dir.write("pkg/leaf.py", p.leaf_text(""));
    InProcessServer s;
    s.initialize();
    s.open(p.recipe, mbl::test::read_file(p.recipe));
    s.open(leaf, p.leaf_text(""));
    s.open(p.helper, mbl::test::read_file(p.helper));
    CHECK(has_code(s.diagnostics(p.recipe, 1), "RC006"));  // num_layers here, selective in the helper
    s.diagnostics(leaf, 1);
    s.diagnostics(p.helper, 1);

    auto& counters = mbl::py::read_counters();
    const auto read = counters.files_read.load(), parsed = counters.files_parsed.load();
    // Unsaved: full recompute with a method. The recipe is linted again without being edited; the leaf is not.
    s.replace(p.helper, 2,
              "def apply(cfg):\n    cfg.model.recompute_granularity = \"full\"\n"
              "    cfg.model.recompute_method = \"uniform\"\n");
    auto relinted = s.client().wait_for([&](const json& m) {
        return m.value("method", "") == "textDocument/publishDiagnostics" &&
               m["params"]["uri"] == mbl::lsp::path_to_uri(p.recipe) && !has_code(m["params"]["diagnostics"], "RC006");
    });
    REQUIRE(relinted);
    CHECK((*relinted)["params"]["version"] == 1);
    CHECK(counters.files_read == read);
    CHECK(counters.files_parsed == parsed + 2);  // the helper's buffer and the recipe that imports it
    for (const auto& m : s.client().received())
        if (m.value("method", "") == "textDocument/publishDiagnostics" &&
            m["params"]["uri"] == mbl::lsp::path_to_uri(leaf))
            CHECK(m["params"]["version"] == 1);  // published once, at open
}

TEST_CASE("a module created on disk is found once the client reports it", "[lsp][python][incremental]") {
    Package p;
    const std::string text =
        kImports +
        "from pkg.late import apply_late\n\n\n"
        "def late_config() -> ConfigContainer:\n"
        "    cfg = ConfigContainer(model=GPTModelProvider(num_layers=4, hidden_size=64, num_attention_heads=4))\n"
        "    apply_late(cfg)\n"
        "    return cfg\n";
    const std::string recipe = p.dir.write("pkg/late_recipe.py", text);
    InProcessServer s;
    // A client that takes dynamic registrations is asked to watch the files.
    s.initialize({{"workspace", {{"didChangeWatchedFiles", {{"dynamicRegistration", true}}}}}});
    auto registration =
        s.client().wait_for([](const json& m) { return m.value("method", "") == "client/registerCapability"; });
    REQUIRE(registration);
    CHECK((*registration)["params"]["registrations"][0]["method"] == "workspace/didChangeWatchedFiles");
    s.open(recipe, text);
    CHECK_FALSE(has_code(s.diagnostics(recipe, 1), "RC004"));  // pkg.late does not exist: unknown, no report

    const std::string late =
        p.dir.write("pkg/late.py", "def apply_late(cfg):\n    cfg.model.recompute_granularity = \"full\"\n");
    s.client().notify("workspace/didChangeWatchedFiles",
                      {{"changes", json::array({{{"uri", mbl::lsp::path_to_uri(late)}, {"type", 1}}})}});
    auto found = s.client().wait_for([&](const json& m) {
        return m.value("method", "") == "textDocument/publishDiagnostics" &&
               m["params"]["uri"] == mbl::lsp::path_to_uri(late) && has_code(m["params"]["diagnostics"], "RC004");
    });
    CHECK(found);
}

TEST_CASE("publishing N problems indexes each text once: the work is linear in N", "[lsp][incremental]") {
    mbl::test::TempDir dir;
    auto& counters = mbl::lsp::publish_counters();
    std::vector<std::uint64_t> indexed;
    for (int n : {200, 400}) {
        std::string text = "model:\n  num_layers: 4\n";  // each repeat of the key is one IN006 error
        for (int i = 0; i < n; ++i) text += "  num_layers: 4\n";
        const std::string path = dir.write("run" + std::to_string(n) + ".yaml", text);
        InProcessServer s;
        s.initialize();
        const auto texts = counters.texts_indexed.load(), converted = counters.diagnostics_converted.load();
        s.open(path, text, "yaml");
        CHECK(s.diagnostics(path, 1).size() == static_cast<std::size_t>(n));
        CHECK(counters.diagnostics_converted - converted == static_cast<std::uint64_t>(n));
        indexed.push_back(counters.texts_indexed - texts);
    }
    CHECK(indexed == std::vector<std::uint64_t>{1, 1});  // one document, indexed once however many problems it has

    // Two documents reporting into one helper: each problem sent for it is checked once against the others.
    Package p;
    const std::string recipe2 = p.dir.write("pkg/recipe2.py", mbl::test::read_file(p.recipe));
    InProcessServer s;
    s.initialize();
    s.open(p.recipe, mbl::test::read_file(p.recipe));
    s.diagnostics(p.recipe, 1);
    const auto checks = counters.duplicate_checks.load();
    s.open(recipe2, mbl::test::read_file(recipe2));
    s.diagnostics(recipe2, 1);
    json helper;  // the last list published for the helper (it comes before the recipe's own)
    for (const auto& m : s.client().received())
        if (m.value("method", "") == "textDocument/publishDiagnostics" &&
            m["params"]["uri"] == mbl::lsp::path_to_uri(p.helper))
            helper = m["params"]["diagnostics"];
    REQUIRE(helper.size() == 2);  // the same line, found for a_config in each file
    CHECK(counters.duplicate_checks - checks == helper.size());
}

TEST_CASE("an edit re-evaluates the recipes it can change, and they come out as a fresh lint's",
          "[lsp][python][incremental]") {
    Package p;
    const std::string before =
        kImports +
        "LAYERS = 4\n\n\n"
        "def _common(cfg):\n"
        "    cfg.model.recompute_granularity = \"full\"\n\n\n"
        "def a_config() -> ConfigContainer:\n"
        "    cfg = ConfigContainer(model=GPTModelProvider(num_layers=LAYERS, hidden_size=64, num_attention_heads=4))\n"
        "    _common(cfg)\n"
        "    cfg.model.recompute_method = \"uniform\"\n"
        "    cfg.model.recompute_num_layers = 1\n"
        "    return cfg\n\n\n"
        "def b_config() -> ConfigContainer:\n"
        "    cfg = ConfigContainer(model=GPTModelProvider(num_layers=LAYERS, hidden_size=64, num_attention_heads=4))\n"
        "    cfg.model.recompute_granularity = \"selective\"\n"
        "    return cfg\n\n\n"
        "def c_config() -> ConfigContainer:\n"
        "    cfg = ConfigContainer(model=GPTModelProvider(num_layers=LAYERS, hidden_size=64, num_attention_heads=4))\n"
        "    cfg.model.recompute_granularity = \"full\"\n"
        "    cfg.model.recompute_method = \"block\"\n"
        "    cfg.model.recompute_num_layers = 3\n"
        "    return cfg\n";
    const std::string path = p.dir.write("pkg/recipes.py", before);
    auto edit = [](std::string text, const std::string& from, const std::string& to) {
        const auto at = text.find(from);
        REQUIRE(at != std::string::npos);
        return text.replace(at, from.size(), to);
    };
    struct Step {
        const char* what;
        std::string text;
        std::uint64_t evaluated;  // recipes evaluated again
    };
    std::vector<Step> steps;
    steps.push_back({"a value in b_config", edit(before, "\"selective\"", "\"full\""), 1});
    steps.push_back({"the helper a_config calls",
                     edit(steps.back().text, "\"full\"\n\n\ndef a_config", "\"selective\"\n\n\ndef a_config"), 1});
    steps.push_back({"a comment after everything", steps.back().text + "# done\n", 0});
    steps.push_back({"a module constant", edit(steps.back().text, "LAYERS = 4", "LAYERS = 8"), 3});
    steps.push_back({"a line above every recipe", edit(steps.back().text, "LAYERS = 8", "# layers\nLAYERS = 8"), 3});
    steps.push_back({"a line inside b_config",
                     edit(steps.back().text, "    return cfg\n\n\ndef c_config", "\n    return cfg\n\n\ndef c_config"),
                     2});

    InProcessServer s;
    s.initialize();
    s.open(path, before);
    s.diagnostics(path, 1);
    auto& counters = mbl::py::read_counters();
    int version = 1;
    for (const auto& step : steps) {
        INFO(step.what);
        const auto evaluated = counters.recipes_evaluated.load();
        s.replace(path, ++version, step.text);
        const json incremental = s.diagnostics(path, version);
        CHECK(counters.recipes_evaluated - evaluated == step.evaluated);
        InProcessServer fresh;
        fresh.initialize();
        fresh.open(path, step.text);
        CHECK(fresh.diagnostics(path, 1) == incremental);
    }
}
