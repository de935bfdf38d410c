// The VS Code extension (integrations/editors/vscode) without VS Code: its module is loaded with stand-ins for the
// `vscode` API and for vscode-languageclient, whose LanguageClient starts the real server the way the library does
// (the command and arguments of serverOptions, over stdio) and runs the LSP handshake with it. Checks that activation
// reads the settings package.json declares, starts `mbridge-lint lsp` with the user's arguments for YAML and Python
// files, that the server answers initialize, and that deactivation stops it.
// Usage: node tests/integrations/test_vscode.js BINARY
"use strict";
const assert = require("assert");
const childProcess = require("child_process");
const fs = require("fs");
const Module = require("module");
const path = require("path");

const binary = process.argv[2];
const extensionDir = path.join(__dirname, "..", "..", "integrations", "editors", "vscode");
const manifest = JSON.parse(fs.readFileSync(path.join(extensionDir, "package.json"), "utf8"));

// What the extension asked of the stand-ins.
const seen = { settingsRead: [], clients: [] };
const userSettings = { path: binary, args: ["--mcore", "0.20.dev"] };

const vscode = {
  workspace: {
    getConfiguration(section) {
      assert.strictEqual(section, "mbridge-lint");
      return {
        get(key, fallback) {
          seen.settingsRead.push(key);
          return key in userSettings ? userSettings[key] : fallback;
        },
      };
    },
  },
};

// One JSON-RPC message over Content-Length framing, and the responses read back.
function frame(message) {
  const body = Buffer.from(JSON.stringify(message), "utf8");
  return Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, "ascii"), body]);
}
function reader(stream, onMessage) {
  let buffer = Buffer.alloc(0);
  stream.on("data", (chunk) => {
    buffer = Buffer.concat([buffer, chunk]);
    for (;;) {
      const end = buffer.indexOf("\r\n\r\n");
      if (end < 0) return;
      const length = Number(/Content-Length: (\d+)/i.exec(buffer.subarray(0, end).toString("ascii"))[1]);
      if (buffer.length < end + 4 + length) return;
      onMessage(JSON.parse(buffer.subarray(end + 4, end + 4 + length).toString("utf8")));
      buffer = buffer.subarray(end + 4 + length);
    }
  });
}

class LanguageClient {
  constructor(id, name, serverOptions, clientOptions) {
    Object.assign(this, { id, name, serverOptions, clientOptions });
    seen.clients.push(this);
  }
  start() {
    const { command, args } = this.serverOptions;
    this.process = childProcess.spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
    this.exited = new Promise((resolve) => this.process.on("exit", (code) => resolve(code)));
    return new Promise((resolve, reject) => {
      this.process.on("error", reject);
      reader(this.process.stdout, (message) => {
        if (message.id === 1) {
          this.initializeResult = message.result;
          this.process.stdin.write(frame({ jsonrpc: "2.0", method: "initialized", params: {} }));
          resolve();
        } else if (message.id === 2) {
          this.process.stdin.write(frame({ jsonrpc: "2.0", method: "exit" }));
        }
      });
      this.process.stdin.write(
        frame({ jsonrpc: "2.0", id: 1, method: "initialize", params: { processId: process.pid, capabilities: {} } }));
    });
  }
  stop() {
    this.process.stdin.write(frame({ jsonrpc: "2.0", id: 2, method: "shutdown" }));
    return this.exited;
  }
}

const load = Module._load;
Module._load = function (request, parent, isMain) {
  if (request === "vscode") return vscode;
  if (request === "vscode-languageclient/node") return { LanguageClient };
  return load.call(this, request, parent, isMain);
};

async function main() {
  const main = path.join(extensionDir, manifest.main);
  assert.ok(fs.existsSync(main), `package.json's main ${manifest.main} exists`);
  assert.deepStrictEqual(manifest.activationEvents.sort(), ["onLanguage:python", "onLanguage:yaml"]);
  assert.ok(manifest.dependencies["vscode-languageclient"], "vscode-languageclient is a dependency");
  const extension = require(main);
  const subscriptions = [];
  await extension.activate({ subscriptions });

  // Every setting read is one package.json declares.
  const declared = Object.keys(manifest.contributes.configuration.properties);
  for (const key of seen.settingsRead) assert.ok(declared.includes(`mbridge-lint.${key}`), `setting ${key} declared`);
  assert.deepStrictEqual([...new Set(seen.settingsRead)].sort(), ["args", "path"]);

  // One client, starting `mbridge-lint lsp ARGS...` for YAML, Python and the configuration files.
  assert.strictEqual(seen.clients.length, 1);
  const client = seen.clients[0];
  assert.strictEqual(client.serverOptions.command, binary);
  assert.deepStrictEqual(client.serverOptions.args, ["lsp", "--mcore", "0.20.dev"]);
  const selector = client.clientOptions.documentSelector;
  assert.ok(selector.some((s) => s.language === "yaml" && s.scheme === "file"));
  assert.ok(selector.some((s) => s.language === "python" && s.scheme === "file"));
  assert.ok(selector.some((s) => s.pattern && s.pattern.includes(".mbridge-lint.toml")));

  // The server it started answered initialize with what the extension relies on.
  const capabilities = client.initializeResult.capabilities;
  assert.strictEqual(client.initializeResult.serverInfo.name, "mbridge-lint");
  assert.ok(capabilities.codeActionProvider.codeActionKinds.includes("quickfix"));
  assert.ok(capabilities.executeCommandProvider.commands.includes("mbridge-lint.showRuleDocumentation"));
  assert.strictEqual(capabilities.hoverProvider, true);

  // Deactivation stops the server: shutdown, exit, and the process ends with 0.
  assert.strictEqual(subscriptions.length, 1);
  assert.strictEqual(await extension.deactivate(), 0);
  console.log("PASS: the VS Code extension starts `mbridge-lint lsp` with the user's arguments and stops it");
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
