// A real editor: headless Neovim (installed by scripts/setup.sh), configured with exactly the snippet docs/integrations.md
// shows (integrations/editors/mbridge-lint.lua), opens a config, gets diagnostics, hovers, applies a quick fix and
// saves, shows a rule's documentation and disables a rule for a line. A small Lua driver plays the user and writes what it saw to a JSON file.
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "../support/run.hpp"
#include "../support/temp_dir.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;
using mbl::test::read_file;
using mbl::test::run_shell;
using mbl::test::TempDir;

namespace {

const std::string kSource = std::string(MBRIDGE_LINT_TEST_DATA) + "/..";

// The user's actions, in Neovim 0.7's Lua API.
const char* kDriver = R"lua(
local out = {}
local function finish(ok)
  out.ok = ok
  local f = io.open(vim.env.DRIVER_OUT, "w")
  f:write(vim.fn.json_encode(out))
  f:close()
  vim.cmd(ok and "qa!" or "cq!")
end
local function codes()
  local list = {}
  for _, d in ipairs(vim.diagnostic.get(0)) do
    table.insert(list, d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code))
  end
  table.sort(list)
  return list
end
local function has(code)
  for _, c in ipairs(codes()) do if c == code then return true end end
  return false
end

vim.cmd("filetype on")
vim.cmd("edit " .. vim.env.CONFIG_FILE)
if not vim.wait(20000, function() return #vim.diagnostic.get(0) > 0 end, 50) then
  out.error = "no diagnostics"
  return finish(false)
end
out.codes_before = codes()

local function position(line, character)
  return { textDocument = vim.lsp.util.make_text_document_params(), position = { line = line, character = character } }
end
local hover = vim.lsp.buf_request_sync(0, "textDocument/hover", position(3, 4), 10000)
for _, r in pairs(hover or {}) do
  if r.result then out.hover = r.result.contents.value end
end

local line = 3  -- recompute_num_layers
local params = {
  textDocument = vim.lsp.util.make_text_document_params(),
  range = { start = { line = line, character = 0 }, ["end"] = { line = line, character = 1 } },
  context = { diagnostics = vim.lsp.diagnostic.get_line_diagnostics(0, line) },
}
local actions = vim.lsp.buf_request_sync(0, "textDocument/codeAction", params, 10000)
out.titles = {}
local chosen
for client_id, r in pairs(actions or {}) do
  for _, a in ipairs(r.result or {}) do
    table.insert(out.titles, a.title)
    if a.title == "Remove recompute_num_layers" then
      chosen = a
      chosen.client = vim.lsp.get_client_by_id(client_id)
    end
  end
end
if not chosen then
  out.error = "no quick fix offered"
  return finish(false)
end
vim.lsp.util.apply_workspace_edit(chosen.edit, chosen.client.offset_encoding)
vim.cmd("write")
if not vim.wait(20000, function() return not has("RC006") end, 50) then
  out.error = "RC006 still reported after the fix"
  return finish(false)
end
out.codes_after = codes()

-- The actions on RC108 (now on line 3): disable it for this line, and its documentation.
local function actions_on(l)
  local p = {
    textDocument = vim.lsp.util.make_text_document_params(),
    range = { start = { line = l, character = 0 }, ["end"] = { line = l, character = 1 } },
    context = { diagnostics = vim.lsp.diagnostic.get_line_diagnostics(0, l) },
  }
  local found = {}
  for client_id, r in pairs(vim.lsp.buf_request_sync(0, "textDocument/codeAction", p, 10000) or {}) do
    for _, a in ipairs(r.result or {}) do
      a.client = vim.lsp.get_client_by_id(client_id)
      found[a.title] = a
    end
  end
  return found
end
local rc108 = actions_on(3)
out.rc108_titles = {}
for title in pairs(rc108) do table.insert(out.rc108_titles, title) end
table.sort(out.rc108_titles)
local disable, docs = rc108["Disable RC108 for this line"], rc108["Show documentation of RC108"]
if not disable or not docs then
  out.error = "no disable or documentation action for RC108"
  return finish(false)
end
-- Neovim 0.7 takes no window/showDocument: the server shows the rule's entry as a message.
vim.lsp.handlers["window/showMessage"] = function(_, result) out.message = result.message end
docs.client.request("workspace/executeCommand", docs.command, function() end, 0)
if not vim.wait(10000, function() return out.message ~= nil end, 50) then
  out.error = "the documentation command showed nothing"
  return finish(false)
end
vim.lsp.util.apply_workspace_edit(disable.edit, disable.client.offset_encoding)
vim.cmd("write")
if not vim.wait(20000, function() return not has("RC108") end, 50) then
  out.error = "RC108 still reported after disabling it for the line"
  return finish(false)
end
out.codes_disabled = codes()
out.text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
finish(true)
)lua";

}  // namespace

TEST_CASE("Neovim with the documented configuration: diagnostics, hover and a quick fix on a config",
          "[editors][neovim]") {
    REQUIRE(run_shell("nvim --version").code == 0);  // scripts/setup.sh installs Debian's neovim
    TempDir dir;
    const std::string config =
        dir.write("project/run.yaml", "model:\n  transformer_impl: local\n  recompute_granularity: selective\n"
                                      "  recompute_num_layers: 2\n  recompute_method: block\n");
    dir.write("project/.mbridge-lint.toml", "mcore = \"0.20.dev\"\n");
    const std::string driver = dir.write("driver.lua", kDriver);
    const std::string out = dir / "out.json";
    const std::string env = "HOME=" + dir.path().string() + " XDG_CONFIG_HOME=" + (dir / "xdg/config") +
                            " XDG_DATA_HOME=" + (dir / "xdg/data") + " XDG_STATE_HOME=" + (dir / "xdg/state") +
                            " XDG_CACHE_HOME=" + (dir / "xdg/cache") +
                            " PATH=" + fs::path(mbl::test::lint_binary()).parent_path().string() +
                            ":/usr/bin:/bin CONFIG_FILE=" + config + " DRIVER_OUT=" + out + " ";
    auto r = run_shell("cd " + (dir / "project") + " && " + env + "timeout 120 nvim --headless -i NONE -n -u " +
                       kSource + "/integrations/editors/mbridge-lint.lua -c 'luafile " + driver + "'");
    INFO(r.out);
    REQUIRE(fs::exists(out));
    json result = json::parse(read_file(out));
    INFO(result.dump(2));
    CHECK(r.code == 0);
    CHECK(result["ok"] == true);
    CHECK(result["codes_before"] == json::array({"RC006", "RC108"}));
    CHECK(result["hover"].get<std::string>().find("**recompute_num_layers** = `2`") != std::string::npos);
    CHECK(result["codes_after"] == json::array({"RC108"}));
    CHECK(result["rc108_titles"] == json::array({"Disable RC108 for this file", "Disable RC108 for this line",
                                                 "Fix all safe mbridge-lint problems (1)", "Remove recompute_method",
                                                 "Show documentation of RC108"}));
    CHECK(result["message"].get<std::string>().starts_with("RC108 recompute-method-ignored-under-selective: "));
    CHECK(result["message"].get<std::string>().find("#rc108-recompute-method-ignored-under-selective") !=
          std::string::npos);
    CHECK(result["codes_disabled"] == json::array());
    CHECK(result["text"] == "model:\n  transformer_impl: local\n  recompute_granularity: selective\n"
                            "  recompute_method: block  # mbridge-lint: disable=RC108");
    // Saved through the editor.
    CHECK(read_file(config) == "model:\n  transformer_impl: local\n  recompute_granularity: selective\n"
                               "  recompute_method: block  # mbridge-lint: disable=RC108\n");
}

TEST_CASE("docs/integrations.md shows the Neovim configuration that the test runs", "[editors][docs]") {
    const std::string readme = read_file(kSource + "/docs/integrations.md");
    CHECK(readme.find(read_file(kSource + "/integrations/editors/mbridge-lint.lua")) != std::string::npos);
}
