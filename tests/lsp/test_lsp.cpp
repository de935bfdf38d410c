// The LSP server as an editor meets it: the real binary over stdio with Content-Length framing.
#include <catch2/catch.hpp>
#include <map>
#include <thread>

#include "../support/lsp_client.hpp"
#include "../support/run.hpp"
#include "../support/temp_dir.hpp"
#include "core/line_index.hpp"
#include "integrations/lsp/positions.hpp"
#include "integrations/lsp/server.hpp"

using json = nlohmann::json;
using mbl::test::LspClient;
using mbl::test::TempDir;
using namespace std::chrono_literals;

namespace {

const std::string kBinary = MBRIDGE_LINT_BINARY;

const std::string kBroken = "# run config under test\n"
                            "model:\n"
                            "  transformer_impl: local\n"
                            "  hidden_dropout: 0.0\n"
                            "  attention_dropout: 0.0\n"
                            "  recompute_granularity: full\n"
                            "  recompute_num_layers: 2\n"
                            "  recompute_modules: [core_attn]\n";

std::string uri_of(const std::string& path) { return mbl::lsp::path_to_uri(path); }

json initialize(LspClient& c, json capabilities = json::object()) {
    const int id =
        c.request("initialize", {{"processId", nullptr}, {"rootUri", nullptr}, {"capabilities", capabilities}});
    auto r = c.response(id);
    REQUIRE(r);
    REQUIRE(r->contains("result"));
    c.notify("initialized", json::object());
    return (*r)["result"];
}

void open(LspClient& c, const std::string& uri, const std::string& text, int version = 1,
          const std::string& language = "yaml") {
    c.notify("textDocument/didOpen",
             {{"textDocument", {{"uri", uri}, {"languageId", language}, {"version", version}, {"text", text}}}});
}

json position(int line, int character) { return {{"line", line}, {"character", character}}; }
json range(int l1, int c1, int l2, int c2) { return {{"start", position(l1, c1)}, {"end", position(l2, c2)}}; }

const json* find_code(const json& diagnostics, const std::string& code) {
    for (const auto& d : diagnostics)
        if (d["code"] == code) return &d;
    return nullptr;
}

// Applies LSP text edits (UTF-16 positions) to a text, last edit first, as an editor does.
std::string apply(std::string text, json edits) {
    std::sort(edits.begin(), edits.end(), [](const json& a, const json& b) {
        return std::make_pair(a["range"]["start"]["line"].get<int>(), a["range"]["start"]["character"].get<int>()) >
               std::make_pair(b["range"]["start"]["line"].get<int>(), b["range"]["start"]["character"].get<int>());
    });
    for (const auto& e : edits) {
        const mbl::lsp::PositionMapper map(text, mbl::lsp::PositionEncoding::Utf16);
        const size_t b = map.offset(e["range"]["start"]), end = map.offset(e["range"]["end"]);
        text.replace(b, end - b, e["newText"].get<std::string>());
    }
    return text;
}

// Asks for the code actions on one diagnostic and returns the quick fix with that title (null when none is offered).
json quick_fix(LspClient& c, const std::string& uri, const json& diagnostic, const std::string& title) {
    const int id = c.request("textDocument/codeAction", {{"textDocument", {{"uri", uri}}},
                                                         {"range", diagnostic["range"]},
                                                         {"context", {{"diagnostics", json::array({diagnostic})}}}});
    auto actions = c.response(id);
    REQUIRE(actions);
    for (const auto& a : (*actions)["result"])
        if (a["kind"] == "quickfix" && a["title"] == title) return a;
    return nullptr;
}

// Sends text edits back to the server as the document's next incremental change, as an editor does after applying them.
void send_edits(LspClient& c, const std::string& uri, int version, const json& edits) {
    json changes = json::array();
    for (const auto& e : edits) changes.push_back({{"range", e["range"]}, {"text", e["newText"]}});
    c.notify("textDocument/didChange",
             {{"textDocument", {{"uri", uri}, {"version", version}}}, {"contentChanges", changes}});
}

void shutdown_and_exit(LspClient& c, int expected_code = 0) {
    const int id = c.request("shutdown", nullptr);
    auto r = c.response(id);
    REQUIRE(r);
    CHECK((*r)["result"].is_null());
    c.notify("exit", nullptr);
    CHECK(c.wait_exit() == expected_code);
}

}  // namespace

TEST_CASE("an editor session: diagnostics, hover, an edit, a quick fix, shutdown", "[lsp]") {
    TempDir dir;
    const std::string path = dir.write("run.yaml", kBroken);
    const std::string uri = uri_of(path);
    auto c = LspClient::spawn(kBinary, {"--mcore", "0.20.dev", "--debounce-ms", "50"});

    json caps = initialize(c);
    CHECK(caps["capabilities"]["positionEncoding"] == "utf-16");     // the default when the client offers nothing
    CHECK(caps["capabilities"]["textDocumentSync"]["change"] == 2);  // incremental
    CHECK(caps["capabilities"]["hoverProvider"] == true);
    CHECK(caps["serverInfo"]["name"] == "mbridge-lint");

    // 1. Opening the file publishes its problems, linked to the rule documentation, notes as related information.
    open(c, uri, kBroken);
    auto published = c.diagnostics(uri, 1);
    REQUIRE(published);
    const json& diags = (*published)["params"]["diagnostics"];
    const json* rc004 = find_code(diags, "RC004");
    REQUIRE(rc004);
    CHECK((*rc004)["severity"] == 1);
    CHECK((*rc004)["source"] == "mbridge-lint");
    CHECK((*rc004)["range"] == range(5, 2, 5, 29));
    CHECK((*rc004)["codeDescription"]["href"].get<std::string>().ends_with("#rc004-full-recompute-without-method"));
    CHECK((*rc004)["message"].get<std::string>().find("recompute_method is not set") != std::string::npos);
    const json* rc109 = find_code(diags, "RC109");
    REQUIRE(rc109);
    CHECK((*rc109)["severity"] == 2);
    REQUIRE((*rc109).contains("relatedInformation"));
    CHECK((*rc109)["relatedInformation"][0]["location"]["uri"] == uri);
    CHECK((*rc109)["relatedInformation"][0]["location"]["range"]["start"]["line"] == 5);

    // 2. Hover over a recompute field: its effective value and where it came from.
    int id = c.request("textDocument/hover", {{"textDocument", {{"uri", uri}}}, {"position", position(6, 5)}});
    auto hover = c.response(id);
    REQUIRE(hover);
    const std::string md = (*hover)["result"]["contents"]["value"];
    CHECK((*hover)["result"]["contents"]["kind"] == "markdown");
    CHECK(md.find("**recompute_num_layers** = `2`") != std::string::npos);
    CHECK(md.find("Megatron Core 0.20.dev") != std::string::npos);
    CHECK(md.find("set in the config file at `run.yaml:7`") != std::string::npos);
    id = c.request("textDocument/hover", {{"textDocument", {{"uri", uri}}}, {"position", position(0, 3)}});
    auto nothing = c.response(id);
    REQUIRE(nothing);
    CHECK((*nothing)["result"].is_null());

    // 3. An incremental edit (full -> selective) is linted again: RC004 goes, RC006 (num_layers under selective) comes.
    std::string text = kBroken;
    json change = {{"range", range(5, 25, 5, 29)}, {"text", "selective"}};
    text = apply(text, json::array({{{"range", change["range"]}, {"newText", "selective"}}}));
    c.notify("textDocument/didChange",
             {{"textDocument", {{"uri", uri}, {"version", 2}}}, {"contentChanges", {change}}});
    published = c.diagnostics(uri, 2);
    REQUIRE(published);
    CHECK(!find_code((*published)["params"]["diagnostics"], "RC004"));
    const json* rc006 = find_code((*published)["params"]["diagnostics"], "RC006");
    REQUIRE(rc006);
    CHECK((*rc006)["range"]["start"]["line"] == 6);

    // 4. The quick fix for RC006, applied as the editor would, and sent back as the next edit.
    const json fix = quick_fix(c, uri, *rc006, "Remove recompute_num_layers");
    REQUIRE(fix.is_object());
    CHECK(fix["isPreferred"] == true);
    CHECK(fix["diagnostics"][0]["code"] == "RC006");
    const json edits = fix["edit"]["changes"][uri];
    REQUIRE(edits.size() == 1);
    text = apply(text, edits);
    CHECK(text.find("recompute_num_layers") == std::string::npos);
    CHECK(text.find("  recompute_granularity: selective\n  recompute_modules: [core_attn]\n") != std::string::npos);
    send_edits(c, uri, 3, edits);
    published = c.diagnostics(uri, 3);
    REQUIRE(published);
    CHECK((*published)["params"]["diagnostics"].empty());

    // 5. Closing withdraws the diagnostics; shutdown then exit ends the process with 0.
    c.notify("textDocument/didClose", {{"textDocument", {{"uri", uri}}}});
    published = c.diagnostics(uri);
    REQUIRE(published);
    CHECK((*published)["params"]["diagnostics"].empty());
    shutdown_and_exit(c, 0);
}

TEST_CASE("hover shows what Megatron Core makes of a value: None becomes [\"core_attn\"]", "[lsp]") {
    TempDir dir;
    const std::string text =
        "model:\n  transformer_impl: local\n  recompute_granularity: selective\n  recompute_modules: null\n";
    const std::string uri = uri_of(dir.write("sel.yaml", text));
    auto c = LspClient::spawn(kBinary, {"--mcore", "0.20.dev"});
    initialize(c);
    open(c, uri, text);
    REQUIRE(c.diagnostics(uri, 1));
    const int id = c.request("textDocument/hover", {{"textDocument", {{"uri", uri}}}, {"position", position(3, 4)}});
    auto hover = c.response(id);
    REQUIRE(hover);
    const std::string md = (*hover)["result"]["contents"]["value"];
    CHECK(md.find("**recompute_modules** = `[\"core_attn\"]`") != std::string::npos);
    CHECK(md.find("written here as `None`") != std::string::npos);
    // The line of Megatron Core that fills it in, read from its source.
    CHECK(md.find("Megatron Core 0.20.dev rewrites None to this (megatron/core/transformer/transformer_config.py:") !=
          std::string::npos);
    shutdown_and_exit(c);
}

TEST_CASE("position encoding: UTF-8 when the client offers it, UTF-16 otherwise", "[lsp]") {
    TempDir dir;
    // Two bytes for é, four for the emoji (two UTF-16 code units) before the flagged entry.
    const std::string text = "model: {_target_: \"é😀\", recompute_granularity: full, recompute_num_layers: 1}\n";
    const std::string uri = uri_of(dir.write("u.yaml", text));
    const int prefix_bytes = static_cast<int>(std::string("model: {_target_: \"é😀\", ").size());
    for (const bool utf8 : {true, false}) {
        auto c = LspClient::spawn(kBinary, {"--mcore", "0.20.dev"});
        json caps = json::object();
        if (utf8) caps = {{"general", {{"positionEncodings", {"utf-8", "utf-16"}}}}};
        json result = initialize(c, caps);
        CHECK(result["capabilities"]["positionEncoding"] == (utf8 ? "utf-8" : "utf-16"));
        open(c, uri, text);
        auto published = c.diagnostics(uri, 1);
        REQUIRE(published);
        const json* rc004 = find_code((*published)["params"]["diagnostics"], "RC004");
        REQUIRE(rc004);
        // UTF-16: é is one unit, the emoji two; UTF-8: 2 and 4 bytes.
        CHECK((*rc004)["range"]["start"]["character"] == (utf8 ? prefix_bytes : prefix_bytes - 1 - 2));
        shutdown_and_exit(c);
    }
}

TEST_CASE("bad messages get JSON-RPC errors and the server keeps serving", "[lsp]") {
    auto c = LspClient::spawn(kBinary, {"--max-message-bytes", "100000"});
    auto error_code = [](const std::optional<json>& m) {
        return m && m->contains("error") ? (*m)["error"]["code"].get<int>() : 0;
    };

    // A request before initialize.
    int id = c.request("textDocument/hover", json::object());
    CHECK(error_code(c.response(id)) == -32002);
    // Notifications before initialize are dropped silently; exit still works later.
    c.notify("textDocument/didOpen", json::object());

    initialize(c);
    // A header block without Content-Length, then a valid request: an error, then the answer.
    c.send_raw("Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n");
    auto parse_error = c.wait_for([](const json& m) { return m.contains("error"); });
    REQUIRE(parse_error);
    CHECK((*parse_error)["error"]["code"] == -32700);
    CHECK((*parse_error)["id"].is_null());
    // A body that is not JSON.
    c.send_raw("Content-Length: 9\r\n\r\n{not json");
    CHECK(error_code(c.wait_for([](const json& m) { return m.contains("error"); })) == -32700);
    // Not JSON-RPC 2.0; an id of the wrong type; no method.
    c.send({{"jsonrpc", "1.0"}, {"id", 50}, {"method", "shutdown"}});
    CHECK(error_code(c.response(50)) == -32600);
    c.send({{"jsonrpc", "2.0"}, {"id", json::array({1})}, {"method", "shutdown"}});
    CHECK(error_code(c.wait_for([](const json& m) { return m.contains("error"); })) == -32600);
    c.send({{"jsonrpc", "2.0"}, {"id", 51}});
    CHECK(error_code(c.response(51)) == -32600);
    // An unknown method, and parameters of the wrong shape.
    id = c.request("workspace/frobnicate", json::object());
    CHECK(error_code(c.response(id)) == -32601);
    id = c.request("textDocument/hover", {{"textDocument", {{"uri", 42}}}});
    CHECK(error_code(c.response(id)) == -32602);
    id = c.request("initialize", {{"capabilities", json::object()}});
    CHECK(error_code(c.response(id)) == -32600);  // a second initialize
    // An unknown notification is ignored; a notification about a document that is not open is logged, not fatal.
    c.notify("$/unknownThing", json::object());
    c.notify("textDocument/didChange",
             {{"textDocument", {{"uri", "file:///nope.yaml"}, {"version", 2}}}, {"contentChanges", json::array()}});
    auto log = c.wait_for([](const json& m) { return m.value("method", "") == "window/logMessage"; });
    REQUIRE(log);
    CHECK((*log)["params"]["message"].get<std::string>().find("not open") != std::string::npos);
    // A message above the size limit is read and dropped with an error.
    const std::string big(150000, 'x');
    c.send_raw("Content-Length: " + std::to_string(big.size()) + "\r\n\r\n" + big);
    auto too_large = c.wait_for([](const json& m) { return m.contains("error"); });
    REQUIRE(too_large);
    CHECK((*too_large)["error"]["message"].get<std::string>().find("above the limit") != std::string::npos);

    // Still alive and answering.
    shutdown_and_exit(c, 0);
}

TEST_CASE("a huge document is linted and the server stays responsive", "[lsp]") {
    TempDir dir;
    std::string text = "# generated\n";
    while (text.size() < 8u << 20) text += "# " + std::string(100, 'x') + "\n";  // 8 MiB of comments
    text += kBroken.substr(kBroken.find("model:"));
    const std::string uri = uri_of(dir.write("huge.yaml", text));
    auto c = LspClient::spawn(kBinary, {"--mcore", "0.20.dev"});
    initialize(c);
    open(c, uri, text);
    auto published = c.diagnostics(uri, 1, 60s);
    REQUIRE(published);
    CHECK(find_code((*published)["params"]["diagnostics"], "RC004"));
    const int id = c.request("textDocument/hover", {{"textDocument", {{"uri", uri}}}, {"position", position(0, 0)}});
    CHECK(c.response(id));
    shutdown_and_exit(c);
}

TEST_CASE("a document with more diagnostics than the cap shows the first ones and one summary", "[lsp]") {
    TempDir dir;
    // 2,500 repeats of a key after a header, one error each (OmegaConf refuses duplicate keys; the file is then not
    // linted further).
    std::string text = "model:\n  num_layers: 4\n  recompute_granularity: full\n  recompute_method: uniform\n"
                       "  recompute_num_layers: 1\n";
    for (int i = 0; i < 2500; ++i) text += "  num_layers: 4\n";
    const std::string uri = uri_of(dir.write("typos.yaml", text));

    SECTION("the default cap") {
        auto c = LspClient::spawn(kBinary, {"--mcore", "0.20.dev"});
        initialize(c);
        open(c, uri, text);
        auto published = c.diagnostics(uri, 1, 60s);
        REQUIRE(published);
        const json& diags = (*published)["params"]["diagnostics"];
        REQUIRE(diags.size() == 1001);
        // The first 1,000 in file order: the repeated keys of (0-based) lines 5 to 1004.
        CHECK(diags[0]["code"] == "IN006");
        CHECK(diags[0]["range"]["start"]["line"] == 5);
        CHECK(diags[1]["range"]["start"]["line"] == 6);
        CHECK(diags[999]["range"]["start"]["line"] == 1004);
        // The summary stands at the first one left out and counts the rest, with the severity of the worst.
        const json& summary = diags[1000];
        CHECK(!summary.contains("code"));
        CHECK(summary["severity"] == 1);
        CHECK(summary["range"]["start"]["line"] == 1005);
        CHECK(summary["message"].get<std::string>().rfind(
                  "1500 more problems in this file not shown (1500 errors): the editor shows the first 1000", 0) == 0);
        CHECK(summary["data"]["omitted"] == json({{"errors", 1500}, {"warnings", 0}, {"infos", 0}}));
        shutdown_and_exit(c);
    }
    SECTION("--max-diagnostics") {
        auto c = LspClient::spawn(kBinary, {"--mcore", "0.20.dev", "--max-diagnostics", "1"});
        initialize(c);
        open(c, uri, text);
        auto published = c.diagnostics(uri, 1, 60s);
        REQUIRE(published);
        const json& diags = (*published)["params"]["diagnostics"];
        REQUIRE(diags.size() == 2);
        CHECK(diags[0]["code"] == "IN006");
        CHECK(diags[1]["data"]["omitted"]["errors"] == 2499);
        shutdown_and_exit(c);
    }
}

TEST_CASE("a document above the size limit gets the same IN001 as check, at once", "[lsp]") {
    TempDir dir;
    std::string text = kBroken;
    while (text.size() <= 16u << 20) text += "# " + std::string(200, 'x') + "\n";
    const std::string uri = uri_of(dir.write("over.yaml", "model: {}\n"));  // on disk: small; the buffer decides
    auto c = LspClient::spawn(kBinary, {"--mcore", "0.20.dev"});
    initialize(c);
    open(c, uri, text);
    auto published = c.diagnostics(uri, 1, 60s);
    REQUIRE(published);
    const json& diags = (*published)["params"]["diagnostics"];
    REQUIRE(diags.size() == 1);
    CHECK(diags[0]["code"] == "IN001");
    CHECK(diags[0]["message"].get<std::string>().find("above mbridge-lint's limit of 16 MiB") != std::string::npos);
    shutdown_and_exit(c);
}

TEST_CASE("edits in quick succession are linted once, for the newest version (debounce)", "[lsp]") {
    TempDir dir;
    const std::string uri = uri_of(dir.write("d.yaml", kBroken));
    auto c = LspClient::spawn(kBinary, {"--mcore", "0.20.dev", "--debounce-ms", "400"});
    initialize(c);
    open(c, uri, kBroken);
    REQUIRE(c.diagnostics(uri, 1));
    for (int v = 2; v <= 6; ++v) {
        // Each edit rewrites the layer count; only the last version's diagnostics may be published.
        c.notify("textDocument/didChange",
                 {{"textDocument", {{"uri", uri}, {"version", v}}},
                  {"contentChanges", {{{"range", range(6, 24, 6, 25)}, {"text", std::to_string(v)}}}}});
    }
    auto last = c.diagnostics(uri, 6, 10s);
    REQUIRE(last);
    // Nothing more arrives, and nothing for an intermediate version was published.
    CHECK(!c.diagnostics(uri, -1, 1500ms));
    for (const auto& m : c.received())
        if (m.value("method", "") == "textDocument/publishDiagnostics")
            CHECK((m["params"]["version"] == 1 || m["params"]["version"] == 6));
    shutdown_and_exit(c);
}

TEST_CASE("exit without shutdown ends with 1, so does the client going away", "[lsp]") {
    {
        auto c = LspClient::spawn(kBinary, {});
        initialize(c);
        c.notify("exit", nullptr);
        CHECK(c.wait_exit() == 1);
    }
    {
        auto c = LspClient::spawn(kBinary, {});
        initialize(c);
        c.close_input();
        CHECK(c.wait_exit() == 1);
    }
    {
        auto c = LspClient::spawn(kBinary, {});
        initialize(c);
        const int id = c.request("shutdown", nullptr);
        REQUIRE(c.response(id));
        const int after = c.request("textDocument/hover", json::object());
        auto r = c.response(after);
        REQUIRE(r);
        CHECK((*r)["error"]["code"] == -32600);
        c.notify("exit", nullptr);
        CHECK(c.wait_exit() == 0);
    }
}

TEST_CASE("configuration files: their own errors are shown, saving one re-lints open documents", "[lsp][config]") {
    TempDir dir;
    const std::string config = dir.write(".mbridge-lint.toml", "ignore = [\"RC109\"]\n");
    const std::string doc = dir.write("c.yaml", kBroken);
    auto c = LspClient::spawn(kBinary, {"--mcore", "0.20.dev"});
    initialize(c);
    open(c, uri_of(doc), kBroken);
    auto first = c.diagnostics(uri_of(doc), 1);
    REQUIRE(first);
    CHECK(!find_code((*first)["params"]["diagnostics"], "RC109"));  // ignored by the configuration

    // Editing the configuration shows its problems as they are typed.
    const std::string typo = "ignroe = [\"RC109\"]\n";
    open(c, uri_of(config), typo, 1, "toml");
    auto config_diags = c.diagnostics(uri_of(config), 1);
    REQUIRE(config_diags);
    REQUIRE((*config_diags)["params"]["diagnostics"].size() == 1);
    CHECK((*config_diags)["params"]["diagnostics"][0]["code"] == "IN004");
    CHECK((*config_diags)["params"]["diagnostics"][0]["message"].get<std::string>().find("did you mean \"ignore\"") !=
          std::string::npos);

    // Saved with a different selection, the open config file's documents are linted again.
    dir.write(".mbridge-lint.toml", "ignore = [\"RC004\"]\n");
    c.notify("textDocument/didChange", {{"textDocument", {{"uri", uri_of(config)}, {"version", 2}}},
                                        {"contentChanges", {{{"text", "ignore = [\"RC004\"]\n"}}}}});
    c.notify("textDocument/didSave", {{"textDocument", {{"uri", uri_of(config)}}}});
    auto relinted = c.wait_for([&](const json& m) {
        return m.value("method", "") == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri_of(doc) &&
               find_code(m["params"]["diagnostics"], "RC109") != nullptr;
    });
    REQUIRE(relinted);
    CHECK(!find_code((*relinted)["params"]["diagnostics"], "RC004"));
    shutdown_and_exit(c);
}

TEST_CASE("fix all: a source action with every safe fix of the document", "[lsp]") {
    TempDir dir;
    const std::string text =
        "model:\n  transformer_impl: local\n  recompute_granularity: selective\n  recompute_num_layers: 2\n"
        "  recompute_method: block  # mbridge-lint: disable=RC104\n";
    const std::string uri = uri_of(dir.write("f.yaml", text));
    auto c = LspClient::spawn(kBinary, {"--mcore", "0.20.dev"});
    initialize(c);
    open(c, uri, text);
    REQUIRE(c.diagnostics(uri, 1));
    const int id = c.request("textDocument/codeAction",
                             {{"textDocument", {{"uri", uri}}},
                              {"range", range(0, 0, 0, 0)},
                              {"context", {{"diagnostics", json::array()}, {"only", {"source.fixAll"}}}}});
    auto r = c.response(id);
    REQUIRE(r);
    REQUIRE((*r)["result"].size() == 1);
    const json& action = (*r)["result"][0];
    CHECK(action["kind"] == "source.fixAll.mbridge-lint");
    CHECK(apply(text, action["edit"]["changes"][uri]) ==
          "model:\n  transformer_impl: local\n  recompute_granularity: selective\n");
    shutdown_and_exit(c);
}

TEST_CASE("fixes name the document version they were computed for when the client takes versioned edits", "[lsp]") {
    // The client refuses a versioned edit once the document has changed: a fix never overwrites an edit made since.
    TempDir dir;
    const std::string text =
        "model:\n  transformer_impl: local\n  recompute_granularity: selective\n  recompute_num_layers: 2\n"
        "  recompute_method: block  # mbridge-lint: disable=RC104\n";
    const std::string uri = uri_of(dir.write("f.yaml", text));
    auto c = LspClient::spawn(kBinary, {"--mcore", "0.20.dev"});
    initialize(c, {{"workspace", {{"workspaceEdit", {{"documentChanges", true}}}}}});
    open(c, uri, text, 7);
    REQUIRE(c.diagnostics(uri, 7));
    const int id = c.request("textDocument/codeAction",
                             {{"textDocument", {{"uri", uri}}},
                              {"range", range(0, 0, 0, 0)},
                              {"context", {{"diagnostics", json::array()}, {"only", {"source.fixAll"}}}}});
    auto r = c.response(id);
    REQUIRE(r);
    REQUIRE((*r)["result"].size() == 1);
    const json& edit = (*r)["result"][0]["edit"];
    CHECK_FALSE(edit.contains("changes"));
    REQUIRE(edit["documentChanges"].size() == 1);
    CHECK(edit["documentChanges"][0]["textDocument"] == json{{"uri", uri}, {"version", 7}});
    CHECK(apply(text, edit["documentChanges"][0]["edits"]) ==
          "model:\n  transformer_impl: local\n  recompute_granularity: selective\n");
    shutdown_and_exit(c);
}

// A recipe whose recompute_num_layers is ignored under selective recompute (RC006, fixed by removing the line).
const std::string kSmallRecipe =
    "from megatron.bridge.training.config import ConfigContainer\n"
    "from megatron.bridge.models import GPTModelProvider\n"
    "\n"
    "\n"
    "def small_config() -> ConfigContainer:\n"
    "    cfg = ConfigContainer(model=GPTModelProvider(num_layers=8, transformer_impl=\"local\"))\n"
    "    cfg.model.recompute_granularity = \"selective\"\n"
    "    cfg.model.recompute_num_layers = 2\n"
    "    return cfg\n";

TEST_CASE("a recipe file in an editor: diagnostics, hover and a quick fix on Python", "[lsp][python]") {
    TempDir dir;
    dir.write("pkg/__init__.py", "");
    const std::string recipe = kSmallRecipe;
    const std::string path = dir.write("pkg/recipes.py", recipe);
    const std::string uri = uri_of(path);
    auto c = LspClient::spawn(kBinary, {"--mcore", "0.20.dev", "--debounce-ms", "50"});
    initialize(c);

    open(c, uri, recipe, 1, "python");
    auto published = c.diagnostics(uri, 1);
    REQUIRE(published);
    const json* rc006 = find_code((*published)["params"]["diagnostics"], "RC006");
    REQUIRE(rc006);
    CHECK((*rc006)["severity"] == 1);
    CHECK((*rc006)["range"]["start"]["line"] == 7);
    bool names_recipe = false;
    for (const auto& info : (*rc006)["relatedInformation"])
        names_recipe |= info["message"].get<std::string>().find("in recipe small_config") != std::string::npos;
    CHECK(names_recipe);

    // Hover on the assignment: the effective value and the line that set it.
    int id = c.request("textDocument/hover", {{"textDocument", {{"uri", uri}}}, {"position", position(6, 16)}});
    auto hover = c.response(id);
    REQUIRE(hover);
    REQUIRE(hover->contains("result"));
    REQUIRE((*hover)["result"].is_object());
    const std::string md = (*hover)["result"]["contents"]["value"];
    INFO(md);
    CHECK(md.find("**recompute_granularity**") != std::string::npos);
    CHECK(md.find("selective") != std::string::npos);
    CHECK(md.find("recipes.py:7") != std::string::npos);

    // The quick fix deletes the statement; the buffer sent back lints clean of RC006.
    const json fix = quick_fix(c, uri, *rc006, "Remove recompute_num_layers");
    REQUIRE(fix.is_object());
    const json edits = fix["edit"]["changes"][uri];
    const std::string fixed = apply(recipe, edits);
    CHECK(fixed.find("recompute_num_layers") == std::string::npos);
    CHECK(fixed.find("    cfg.model.recompute_granularity = \"selective\"\n    return cfg\n") != std::string::npos);
    send_edits(c, uri, 2, edits);
    published = c.diagnostics(uri, 2);
    REQUIRE(published);
    CHECK(!find_code((*published)["params"]["diagnostics"], "RC006"));
    shutdown_and_exit(c, 0);
}

// A quick fix made for one recipe that would change another file's recipe running the same line (as `--fix` leaves it):
// offered disabled, naming that recipe, so the editor shows why instead of applying it.
TEST_CASE("a quick fix whose line another file's recipe runs is disabled, naming that recipe", "[lsp][python][fix]") {
    TempDir dir;
    dir.write("pkg/__init__.py", "");
    const std::string recipe = kSmallRecipe;
    const std::string uri = uri_of(dir.write("pkg/recipes.py", recipe));
    // Full recompute needs the layer count the fix would remove.
    dir.write("pkg/full.py", "from pkg.recipes import small_config\n\n\n"
                             "def small_full_config():\n"
                             "    cfg = small_config()\n"
                             "    cfg.model.recompute_granularity = \"full\"\n"
                             "    cfg.model.recompute_method = \"block\"\n"
                             "    return cfg\n");
    auto c = LspClient::spawn(kBinary, {"--mcore", "0.20.dev", "--debounce-ms", "50"});
    initialize(c);
    open(c, uri, recipe, 1, "python");
    auto published = c.diagnostics(uri, 1);
    REQUIRE(published);
    const json* rc006 = find_code((*published)["params"]["diagnostics"], "RC006");
    REQUIRE(rc006);
    const json fix = quick_fix(c, uri, *rc006, "Remove recompute_num_layers");
    REQUIRE(fix.is_object());
    INFO(fix.dump());
    CHECK_FALSE(fix.contains("edit"));
    REQUIRE(fix.contains("disabled"));
    const std::string reason = fix["disabled"]["reason"];
    CHECK(reason.find("recipe small_full_config") != std::string::npos);
    CHECK(reason.find("full.py") != std::string::npos);
    CHECK(reason.find("runs that line too") != std::string::npos);
    shutdown_and_exit(c, 0);
}

TEST_CASE("an unsaved edit to a helper module is what the recipes importing it see", "[lsp][python][dependents]") {
    TempDir dir;
    dir.write("pkg/__init__.py", "");
    const std::string helper = "def apply_recompute(cfg):\n"
                               "    cfg.model.recompute_granularity = \"selective\"\n";
    const std::string recipe =
        "from megatron.bridge.training.config import ConfigContainer\n"
        "from megatron.bridge.models import GPTModelProvider\n"
        "from pkg.common import apply_recompute\n"
        "\n"
        "\n"
        "def small_config() -> ConfigContainer:\n"
        "    cfg = ConfigContainer(model=GPTModelProvider(num_layers=8, transformer_impl=\"local\"))\n"
        "    apply_recompute(cfg)\n"
        "    cfg.model.recompute_num_layers = 2\n"
        "    return cfg\n";
    const std::string helper_uri = uri_of(dir.write("pkg/common.py", helper));
    const std::string recipe_uri = uri_of(dir.write("pkg/recipes.py", recipe));
    auto c = LspClient::spawn(kBinary, {"--mcore", "0.20.dev", "--debounce-ms", "50"});
    initialize(c);
    open(c, helper_uri, helper, 1, "python");
    open(c, recipe_uri, recipe, 1, "python");
    auto has = [&](const std::string& code) {
        return [&, code](const json& m) {
            return m.value("method", "") == "textDocument/publishDiagnostics" && m["params"]["uri"] == recipe_uri &&
                   find_code(m["params"]["diagnostics"], code) != nullptr;
        };
    };
    REQUIRE(c.wait_for(has("RC006")));  // num_layers in the recipe, selective in the helper

    // The helper now asks for full recompute with a method; the file on disk still says selective.
    const std::string edited = "def apply_recompute(cfg):\n"
                               "    cfg.model.recompute_granularity = \"full\"\n"
                               "    cfg.model.recompute_method = \"uniform\"\n";
    c.notify("textDocument/didChange", {{"textDocument", {{"uri", helper_uri}, {"version", 2}}},
                                        {"contentChanges", json::array({{{"text", edited}}})}});
    auto relinted = c.wait_for([&](const json& m) {
        return m.value("method", "") == "textDocument/publishDiagnostics" && m["params"]["uri"] == recipe_uri &&
               !find_code(m["params"]["diagnostics"], "RC006");
    });
    REQUIRE(relinted);
    for (const auto& d : (*relinted)["params"]["diagnostics"]) CHECK(d["severity"] != 1);  // no errors left

    // Nothing was saved: the same recipe linted from disk still fails on the helper's old text.
    const auto on_disk =
        mbl::test::run_shell("cd " + dir.path().string() + " && " + kBinary + " check --mcore 0.20.dev pkg/recipes.py");
    INFO(on_disk.out);
    CHECK(on_disk.code == 1);
    CHECK(on_disk.out.find("RC006") != std::string::npos);
    shutdown_and_exit(c);
}

namespace {

// The code actions offered on one 0-based line, by title.
std::map<std::string, json> actions_on(LspClient& c, const std::string& uri, int line) {
    const int id = c.request("textDocument/codeAction",
                             {{"textDocument", {{"uri", uri}}}, {"range", range(line, 0, line, 1)}, {"context", {}}});
    auto r = c.response(id);
    REQUIRE(r);
    std::map<std::string, json> by_title;
    for (const auto& a : (*r)["result"]) by_title[a["title"]] = a;
    return by_title;
}

std::vector<std::string> codes_of(const json& published) {
    std::vector<std::string> codes;
    for (const auto& d : published["params"]["diagnostics"]) codes.push_back(d["code"]);
    std::sort(codes.begin(), codes.end());
    return codes;
}

}  // namespace

TEST_CASE("code actions: disable a rule for the line or the file, in the suppression syntax the linter reads",
          "[lsp][suppressions]") {
    TempDir dir;
    const std::string uri = uri_of(dir.write("run.yaml", kBroken));
    auto c = LspClient::spawn(kBinary, {"--mcore", "0.20.dev", "--debounce-ms", "0"});
    initialize(c);
    open(c, uri, kBroken);
    auto published = c.diagnostics(uri, 1);
    REQUIRE(published);
    const std::vector<std::string> before = codes_of(*published);
    REQUIRE(std::count(before.begin(), before.end(), "RC004") == 1);

    // Line 6 (recompute_granularity: full): RC004 and whatever else points there, each with three actions.
    auto actions = actions_on(c, uri, 5);
    REQUIRE(actions.count("Disable RC004 for this line"));
    REQUIRE(actions.count("Disable RC004 for this file"));
    REQUIRE(actions.count("Show documentation of RC004"));
    const json& line_action = actions["Disable RC004 for this line"];
    CHECK(line_action["kind"] == "quickfix");
    CHECK(line_action["diagnostics"][0]["code"] == "RC004");
    const json edits = line_action["edit"]["changes"][uri];
    std::string text = apply(kBroken, edits);
    CHECK(text.find("  recompute_granularity: full  # mbridge-lint: disable=RC004\n") != std::string::npos);
    send_edits(c, uri, 2, edits);
    published = c.diagnostics(uri, 2);
    REQUIRE(published);
    std::vector<std::string> expected = before;
    expected.erase(std::find(expected.begin(), expected.end(), "RC004"));
    CHECK(codes_of(*published) == expected);  // RC004 alone is gone, and no RC900: the suppression is used

    // For the file: the first line becomes the directive, and every diagnostic of that code goes.
    const std::string other = expected.front();
    actions = actions_on(c, uri, (*published)["params"]["diagnostics"][0]["range"]["start"]["line"].get<int>());
    REQUIRE(actions.count("Disable " + other + " for this file"));
    const json file_edits = actions["Disable " + other + " for this file"]["edit"]["changes"][uri];
    text = apply(text, file_edits);
    CHECK(text.starts_with("# mbridge-lint: disable-file=" + other + "\n# run config under test\n"));
    send_edits(c, uri, 3, file_edits);
    published = c.diagnostics(uri, 3);
    REQUIRE(published);
    for (const auto& code : codes_of(*published)) CHECK(code != other);
    // Asked for quick fixes only (context.only), the documentation command is not offered.
    const int id = c.request(
        "textDocument/codeAction",
        {{"textDocument", {{"uri", uri}}}, {"range", range(6, 0, 6, 1)}, {"context", {{"only", {"quickfix"}}}}});
    auto only = c.response(id);
    REQUIRE(only);
    for (const auto& a : (*only)["result"]) CHECK(a["kind"] == "quickfix");
    shutdown_and_exit(c);
}

TEST_CASE("show documentation: the rule's heading in the editor, or its text as a message", "[lsp]") {
    TempDir dir;
    const std::string uri = uri_of(dir.write("run.yaml", kBroken));
    const json command{{"command", "mbridge-lint.showRuleDocumentation"}, {"arguments", {"RC004"}}};
    SECTION("a client without window/showDocument gets the rule's entry as a message") {
        auto c = LspClient::spawn(kBinary, {"--mcore", "0.20.dev"});
        initialize(c);
        open(c, uri, kBroken);
        REQUIRE(c.diagnostics(uri, 1));
        const json action = actions_on(c, uri, 5)["Show documentation of RC004"];
        CHECK(action["command"]["command"] == command["command"]);
        CHECK(action["command"]["arguments"] == command["arguments"]);
        const int id = c.request("workspace/executeCommand", command);
        auto message = c.wait_for([](const json& m) { return m.value("method", "") == "window/showMessage"; });
        REQUIRE(message);
        auto r = c.response(id);
        REQUIRE(r);
        CHECK((*r)["result"].is_null());
        CHECK((*message)["params"]["type"] == 3);
        const std::string text = (*message)["params"]["message"];
        CHECK(text.starts_with("RC004 full-recompute-without-method: "));
        CHECK(text.find("\n\n") != std::string::npos);  // then the rule's documentation
        CHECK(text.ends_with("#rc004-full-recompute-without-method"));
        // An unknown command or rule is a bad request, answered as one.
        const int bad = c.request("workspace/executeCommand",
                                  {{"command", "mbridge-lint.showRuleDocumentation"}, {"arguments", {"RC999"}}});
        auto error = c.response(bad);
        REQUIRE(error);
        CHECK((*error)["error"]["code"] == -32602);
        CHECK((*error)["error"]["message"] == "workspace/executeCommand: no documentation for \"RC999\"");
        const int unknown = c.request("workspace/executeCommand", {{"command", "mbridge-lint.format"}});
        error = c.response(unknown);
        REQUIRE(error);
        CHECK((*error)["error"]["message"] == "workspace/executeCommand: unknown command \"mbridge-lint.format\"");
        shutdown_and_exit(c);
    }
    SECTION("a client with window/showDocument is asked to open the page at the rule's heading") {
        auto c = LspClient::spawn(kBinary, {"--mcore", "0.20.dev"});
        initialize(c, {{"window", {{"showDocument", {{"support", true}}}}}});
        const int id = c.request("workspace/executeCommand", command);
        auto show = c.wait_for([](const json& m) { return m.value("method", "") == "window/showDocument"; });
        REQUIRE(show);
        REQUIRE(c.response(id));
        const std::string page = (*show)["params"]["uri"];
        REQUIRE(page.starts_with("file://"));  // this build's docs/rules.md
        CHECK(page.ends_with("/docs/rules.md"));
        const std::string rules = mbl::test::read_file(mbl::lsp::uri_to_path(page));
        const int line = (*show)["params"]["selection"]["start"]["line"];
        CHECK(mbl::LineIndex(rules).line_text(line + 1) == "## RC004-full-recompute-without-method");
        CHECK((*show)["params"]["takeFocus"] == true);
        shutdown_and_exit(c);
    }
}

TEST_CASE("an edit is linted at once when the last lint took less than the typing gap, else after the debounce",
          "[lsp]") {
    CHECK(mbl::lsp::lint_delay(std::nullopt, 10s, 150ms) == 150ms);  // never linted: unknown, so the debounce
    CHECK(mbl::lsp::lint_delay(20ms, 300ms, 150ms) == 0ms);          // done before the next keystroke
    CHECK(mbl::lsp::lint_delay(400ms, 300ms, 150ms) == 150ms);       // slower than typing: wait for a pause
    CHECK(mbl::lsp::lint_delay(1ms, 20ms, 150ms) == 150ms);          // a burst (a paste, a formatter): wait

    TempDir dir;
    const std::string uri = uri_of(dir.write("d.yaml", kBroken));
    // A debounce far longer than the test waits: diagnostics that come sooner were not debounced.
    auto c = LspClient::spawn(kBinary, {"--mcore", "0.20.dev", "--debounce-ms", "10000"});
    initialize(c);
    open(c, uri, kBroken);
    REQUIRE(c.diagnostics(uri, 1));
    auto edit = [&](int version) {
        c.notify("textDocument/didChange",
                 {{"textDocument", {{"uri", uri}, {"version", version}}},
                  {"contentChanges", {{{"range", range(6, 24, 6, 25)}, {"text", std::to_string(version)}}}}});
    };
    std::this_thread::sleep_for(1500ms);  // a pause in typing, far longer than a lint of this file
    edit(2);
    CHECK(c.diagnostics(uri, 2, 20s));
    // Two edits in a row: the second comes within the typing pause, so it waits for the (long) debounce.
    edit(3);
    edit(4);
    CHECK(!c.diagnostics(uri, 4, 2s));
    c.notify("exit", nullptr);
}

TEST_CASE("the server keeps the trees of the modules a recipe imports for its next start, and --no-cache none",
          "[lsp]") {
    TempDir dir;
    std::string helper = "def set_recompute(cfg):\n    cfg.recompute_granularity = 'full'\n";
    for (int i = 0; i < 80; ++i) helper += "def unused_" + std::to_string(i) + "(x):\n    return x\n";  // > 1 KiB
    dir.write("pkg/__init__.py", "");
    dir.write("pkg/helpers.py", helper);
    const std::string recipe = "from pkg.helpers import set_recompute\n"
                               "from megatron.bridge.training.config import ConfigContainer\n"
                               "from megatron.bridge.models import GPTModelProvider\n\n"
                               "def pretrain_config() -> ConfigContainer:\n"
                               "    cfg = ConfigContainer(model=GPTModelProvider(num_layers=4))\n"
                               "    set_recompute(cfg.model)\n"
                               "    return cfg\n";
    const std::string uri = uri_of(dir.write("recipe.py", recipe));
    auto trees = [](const std::string& cache) {
        int n = 0;
        if (std::filesystem::exists(cache))
            for (const auto& e : std::filesystem::recursive_directory_iterator(cache))
                n += e.path().extension() == ".tree";
        return n;
    };
    auto first_lint = [&](const std::string& cache, std::vector<std::string> args) {
        setenv("MBRIDGE_LINT_CACHE_DIR", cache.c_str(), 1);
        args.insert(args.begin(), {"--mcore", "0.20.dev"});
        auto c = LspClient::spawn(kBinary, args);
        initialize(c);
        open(c, uri, recipe, 1, "python");
        auto published = c.diagnostics(uri, 1);
        REQUIRE(published);
        c.notify("exit", nullptr);
        unsetenv("MBRIDGE_LINT_CACHE_DIR");
        return (*published)["params"]["diagnostics"];
    };
    const std::string cache = (std::filesystem::path(dir.path()) / "cache").string();
    const json cold = first_lint(cache, {});
    CHECK(trees(cache) == 1);              // pkg/helpers.py; the recipe is the editor's buffer, __init__.py too small
    CHECK(first_lint(cache, {}) == cold);  // read back: the same diagnostics
    const std::string other = (std::filesystem::path(dir.path()) / "other").string();
    CHECK(first_lint(other, {"--no-cache"}) == cold);
    CHECK(trees(other) == 0);
}
