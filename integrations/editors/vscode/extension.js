// Starts `mbridge-lint lsp` for YAML and Python files in the workspace; everything else comes from the server.
const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const settings = vscode.workspace.getConfiguration("mbridge-lint");
  const serverOptions = {
    command: settings.get("path", "mbridge-lint"),
    args: ["lsp", ...settings.get("args", [])],
  };
  const clientOptions = {
    documentSelector: [
      { scheme: "file", language: "yaml" },
      { scheme: "file", language: "python" },
      { scheme: "file", pattern: "**/{.mbridge-lint.toml,pyproject.toml}" },
    ],
  };
  client = new LanguageClient("mbridge-lint", "mbridge-lint", serverOptions, clientOptions);
  context.subscriptions.push({ dispose: () => client && client.stop() });
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
