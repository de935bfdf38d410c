// A second real editor: Emacs with Eglot (Debian's emacs-nox and elpa-eglot, installed by scripts/setup.sh) in batch
// mode, configured with exactly the snippet in docs/integrations.md (integrations/editors/mbridge-lint.el). An Emacs Lisp driver
// plays the user: open a config, wait for diagnostics, hover, pick the quick fix, save.
#include <catch2/catch.hpp>

#include <algorithm>
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

const std::string kSourceRoot = std::string(MBRIDGE_LINT_TEST_DATA) + "/..";

const char* kEmacsDriver = R"elisp(
(require 'eglot)
(require 'yaml-mode)
(require 'json)
(setq eglot-sync-connect t)
(defvar driver-published nil "Every publishDiagnostics received, newest first.")
(advice-add 'eglot-handle-notification :before
            (lambda (_server method &rest params)
              (when (eq method 'textDocument/publishDiagnostics)
                (push (plist-get params :diagnostics) driver-published))))
(defun driver-wait (pred seconds)
  (let ((end (+ (float-time) seconds)))
    (while (and (not (funcall pred)) (< (float-time) end))
      (accept-process-output nil 0.05))
    (funcall pred)))
(defun driver-codes (diags)
  (sort (mapcar (lambda (d) (plist-get d :code)) (append diags nil)) #'string<))
(defvar driver-out nil)
(defun driver-finish (ok)
  (push (cons 'ok (if ok t :json-false)) driver-out)
  (with-temp-file (getenv "DRIVER_OUT") (insert (json-encode driver-out)))
  (kill-emacs (if ok 0 1)))

(find-file (getenv "CONFIG_FILE"))
(run-hooks 'post-command-hook)  ; eglot-ensure connects on the next command; batch mode has no command loop
(unless (driver-wait (lambda () (and driver-published (> (length (car driver-published)) 0))) 30)
  (push '(error . "no diagnostics") driver-out)
  (driver-finish nil))
(push (cons 'codes_before (driver-codes (car driver-published))) driver-out)
(goto-char (point-min)) (forward-line 3) (forward-char 4)
(let ((hover (jsonrpc-request (eglot--current-server-or-lose) :textDocument/hover (eglot--TextDocumentPositionParams))))
  (push (cons 'hover (plist-get (plist-get hover :contents) :value)) driver-out))
(let* ((actions (eglot-code-actions (point) (point)))
       (fix (seq-find (lambda (a) (equal (plist-get a :title) "Remove recompute_num_layers")) actions)))
  (push (cons 'titles (mapcar (lambda (a) (plist-get a :title)) actions)) driver-out)
  (unless fix
    (push '(error . "no quick fix offered") driver-out)
    (driver-finish nil))
  (eglot--apply-workspace-edit (plist-get fix :edit)))
(save-buffer)
(unless (driver-wait (lambda () (not (member "RC006" (driver-codes (car driver-published))))) 30)
  (push '(error . "RC006 still reported after the fix") driver-out)
  (driver-finish nil))
(push (cons 'codes_after (driver-codes (car driver-published))) driver-out)
(push (cons 'text (buffer-substring-no-properties (point-min) (point-max))) driver-out)
(driver-finish t)
)elisp";

}  // namespace

TEST_CASE("Emacs + Eglot with the documented configuration: diagnostics, hover and a quick fix on a config",
          "[editors][emacs]") {
    REQUIRE(run_shell("emacs --version").code == 0);  // scripts/setup.sh installs emacs-nox, elpa-eglot, elpa-yaml-mode
    TempDir dir;
    const std::string config =
        dir.write("project/run.yaml", "model:\n  transformer_impl: local\n  recompute_granularity: selective\n"
                                      "  recompute_num_layers: 2\n  recompute_method: block\n");
    dir.write("project/.mbridge-lint.toml", "mcore = \"0.20.dev\"\n");
    const std::string driver = dir.write("driver.el", kEmacsDriver);
    const std::string out = dir / "out.json";
    const std::string env = "HOME=" + (dir / "project") +
                            " PATH=" + fs::path(mbl::test::lint_binary()).parent_path().string() +
                            ":/usr/bin:/bin CONFIG_FILE=" + config + " DRIVER_OUT=" + out + " ";
    auto r = run_shell("cd " + (dir / "project") + " && git init -q && " + env + "timeout 120 emacs --batch -l " +
                       kSourceRoot + "/integrations/editors/mbridge-lint.el -l " + driver);
    INFO(r.out);
    REQUIRE(fs::exists(out));
    json result = json::parse(read_file(out));
    INFO(result.dump(2));
    CHECK(r.code == 0);
    CHECK(result["ok"] == true);
    CHECK(result["codes_before"] == json::array({"RC006", "RC108"}));
    CHECK(result["hover"].get<std::string>().find("**recompute_num_layers** = `2`") != std::string::npos);
    CHECK(result["titles"][0] == "Remove recompute_num_layers");
    // The editor actions beside the quick fix, as Eglot lists them.
    for (const std::string title :
         {"Disable RC006 for this line", "Disable RC006 for this file", "Show documentation of RC006"}) {
        INFO(title);
        CHECK(std::count(result["titles"].begin(), result["titles"].end(), title) == 1);
    }
    CHECK(result["codes_after"] == json::array({"RC108"}));
    CHECK(read_file(config) ==
          "model:\n  transformer_impl: local\n  recompute_granularity: selective\n  recompute_method: block\n");
}

TEST_CASE("docs/integrations.md shows the Emacs configuration that the test runs", "[editors][docs]") {
    const std::string readme = read_file(kSourceRoot + "/docs/integrations.md");
    CHECK(readme.find(read_file(kSourceRoot + "/integrations/editors/mbridge-lint.el")) != std::string::npos);
}
