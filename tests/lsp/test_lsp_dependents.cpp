// A module that recipes import changes in the editor: the recipes that depend on it are linted again. Runs the server
// in-process so that a stand-in recipe front end (tests/support) can declare dependencies as the real one will.
#include <catch2/catch.hpp>
#include <thread>

#include "../support/lsp_client.hpp"
#include "../support/mini_recipe_front_end.hpp"
#include "../support/temp_dir.hpp"
#include "integrations/lsp/server.hpp"

using json = nlohmann::json;
using namespace std::chrono_literals;

TEST_CASE("editing an imported module re-lints the recipes that import it", "[lsp][dependents]") {
    mbl::test::use_mini_recipe_front_end();
    mbl::test::TempDir dir;
    const std::string helper =
        "def common(cfg):\n    cfg.model.transformer_impl = \"local\"\n    cfg.model.recompute_granularity = \"selective\"\n";
    const std::string recipe = "# depends: helper.py\ndef pretrain_config():\n    cfg.model.recompute_num_layers = 2\n";
    const std::string helper_uri = mbl::lsp::path_to_uri(dir.write("helper.py", helper));
    const std::string recipe_uri = mbl::lsp::path_to_uri(dir.write("recipe.py", recipe));

    int to_server[2], from_server[2];
    REQUIRE(pipe(to_server) == 0);
    REQUIRE(pipe(from_server) == 0);
    signal(SIGPIPE, SIG_IGN);
    int exit_code = -1;
    std::thread server_thread([&] {
        mbl::lsp::Server server(
            mbl::lsp::ServerOptions{.debounce = 50ms, .mcore = "0.20.dev", .max_message_bytes = 1u << 20}, to_server[0],
            from_server[1]);
        exit_code = server.run();
        close(from_server[1]);
    });
    // Declared after the thread: the client goes first (closing its pipe ends the server), then the thread is joined.
    struct Joiner {
        std::thread& t;
        ~Joiner() {
            if (t.joinable()) t.join();
        }
    } joiner{server_thread};
    mbl::test::LspClient c(to_server[1], from_server[0]);

    const int id = c.request("initialize", {{"capabilities", json::object()}});
    REQUIRE(c.response(id));
    c.notify("initialized", json::object());
    c.notify("textDocument/didOpen",
             {{"textDocument", {{"uri", helper_uri}, {"languageId", "python"}, {"version", 1}, {"text", helper}}}});
    c.notify("textDocument/didOpen",
             {{"textDocument", {{"uri", recipe_uri}, {"languageId", "python"}, {"version", 1}, {"text", recipe}}}});
    auto first = c.wait_for([&](const json& m) {
        return m.value("method", "") == "textDocument/publishDiagnostics" && m["params"]["uri"] == recipe_uri &&
               !m["params"]["diagnostics"].empty();
    });
    REQUIRE(first);
    CHECK((*first)["params"]["diagnostics"][0]["code"] == "RC006");  // num_layers here, selective in the helper
    REQUIRE((*first)["params"]["diagnostics"][0].contains("relatedInformation"));
    CHECK((*first)["params"]["diagnostics"][0]["relatedInformation"][0]["location"]["uri"] == helper_uri);

    // The helper switches to full recompute; only the helper is edited.
    // "selective" is on line 2, characters 39-48.
    json change = {{"range", {{"start", {{"line", 2}, {"character", 39}}}, {"end", {{"line", 2}, {"character", 48}}}}},
                   {"text", "full"}};
    c.notify("textDocument/didChange",
             {{"textDocument", {{"uri", helper_uri}, {"version", 2}}}, {"contentChanges", json::array({change})}});
    // The recipe is linted again: RC006 is gone; its new problem (full without a method) sits in the helper.
    auto again = c.wait_for([&](const json& m) {
        return m.value("method", "") == "textDocument/publishDiagnostics" && m["params"]["uri"] == recipe_uri &&
               m["params"]["diagnostics"].empty();
    });
    REQUIRE(again);
    auto helper_has_rc004 = [&](const json& m) {
        if (m.value("method", "") != "textDocument/publishDiagnostics" || m["params"]["uri"] != helper_uri)
            return false;
        for (const auto& d : m["params"]["diagnostics"])
            if (d["code"] == "RC004") return true;
        return false;
    };
    // It may have arrived before the recipe's own update.
    bool in_helper = std::any_of(c.received().begin(), c.received().end(), helper_has_rc004) ||
                     c.wait_for(helper_has_rc004).has_value();
    REQUIRE(in_helper);

    const int sid = c.request("shutdown", nullptr);
    REQUIRE(c.response(sid));
    c.notify("exit", nullptr);
    server_thread.join();
    CHECK(exit_code == 0);
    close(to_server[0]);
}
