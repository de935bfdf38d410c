#pragma once
// `mbridge-lint lsp`: a Language Server Protocol 3.17 server over stdio. Documents (YAML configs, Python recipes and
// the configuration files) are synchronised incrementally; edits are linted after a short pause (debounce), and a
// lint whose document changed meanwhile is thrown away. Diagnostics carry a link to the rule's documentation and the
// notes as related information; fixable ones offer quick fixes; hovering a field shows its effective value.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "config/project_config.hpp"
#include "engine/lint_session.hpp"
#include "integrations/lsp/diagnostic_cap.hpp"
#include "integrations/lsp/json_rpc.hpp"
#include "integrations/lsp/positions.hpp"

namespace mbl::lsp {

// The work of turning diagnostics into LSP messages, for the tests that check it grows linearly with their number.
struct PublishCounters {
    std::atomic<std::uint64_t> texts_indexed{0};  // texts whose lines were indexed to convert positions
    std::atomic<std::uint64_t> diagnostics_converted{0};
    std::atomic<std::uint64_t> duplicate_checks{
        0};  // lookups that keep a diagnostic two documents found from repeating
    // Lints and import scans begun and ended: equal when the server is idle, which the tests that count its reads
    // wait for (a document's imports are scanned a moment after its lint, when no other lint is due).
    std::atomic<std::uint64_t> work_started{0};
    std::atomic<std::uint64_t> work_finished{0};
};
PublishCounters& publish_counters();

// How long an edit waits before it is linted: not at all when the document's last lint took less than the gap
// between its last two edits (the lint is done before the next keystroke) and that gap is a typing pause (100 ms or
// more: edits closer together are a paste, a formatter or a fast typist mid-word); else the debounce, so that a burst
// of edits is linted once. Unknown before the first lint: the debounce.
inline constexpr std::chrono::milliseconds kTypingPause{100};
std::chrono::milliseconds lint_delay(std::optional<std::chrono::steady_clock::duration> last_lint,
                                     std::chrono::steady_clock::duration typing_gap,
                                     std::chrono::milliseconds debounce);

// The command of the "show rule documentation" code action (workspace/executeCommand).
inline constexpr const char* kShowDocumentationCommand = "mbridge-lint.showRuleDocumentation";

struct ServerOptions {
    std::chrono::milliseconds debounce{150};
    std::string mcore;        // as `check --mcore`
    std::string mcore_path;   // as `check --mcore-path`
    std::string config_file;  // as `check --config`
    std::size_t max_message_bytes = FrameReader::kDefaultMaxBody;
    std::size_t max_diagnostics = kDefaultMaxDiagnostics;  // per document, then one summary
};

class Server {
public:
    Server(ServerOptions options, int in_fd, int out_fd);
    ~Server();
    // Serves until `exit` or the end of input; returns the process exit code (0 only after `shutdown`).
    int run();

private:
    struct Document {
        std::string uri, path, language, text;
        int version = 0;
        std::set<std::string> dependencies;                // files it was built from (imports), from its last lint
        int dependencies_version = -1;                     // the version they were scanned for
        std::chrono::steady_clock::time_point changed_at;  // opened or last edited
        std::optional<std::chrono::steady_clock::duration> lint_time;  // how long its last lint took
    };
    struct Snapshot {
        std::string uri, path, text;
        int version = 0;
    };

    void handle(const json& message);
    void handle_request(const std::string& method, const json& id, const json& params);
    void handle_notification(const std::string& method, const json& params);

    json initialize(const json& params);
    void did_open(const json& params);
    void did_change(const json& params);
    void did_save(const json& params);
    void did_close(const json& params);
    void did_change_watched_files(const json& params);
    json hover(const json& params);
    json code_action(const json& params);
    json execute_command(const json& params);
    void show_documentation(const std::string& code);
    // A workspace edit of `changes` (uri -> text edits): versioned documentChanges when the client takes them, the
    // linted document at the version its fixes were computed for.
    json versioned(json changes, const std::string& linted_uri, int linted_version);

    // Linting.
    void schedule(const std::string& uri, std::chrono::milliseconds delay);
    void schedule_dependents(const std::string& path);
    void schedule_all();
    void worker();
    // Lints a document as it is now, with every open buffer visible to the front end (imports read buffers).
    FileResult lint_now(const Snapshot& doc, SourceManager& sources);
    void add_open_documents(SourceManager& sources, const Snapshot& doc);
    void lint_and_publish(const Snapshot& doc);
    // Scans the imports of the document's current version (the files whose edits re-lint it).
    void scan_dependencies(const std::string& uri);
    void publish(const std::string& source_uri, const std::map<std::string, json>& by_uri);
    // LSP positions of the files diagnostics point into; each text is indexed once per use, however many
    // diagnostics it holds.
    class Ranges {
    public:
        Ranges(const SourceManager& sources, PositionEncoding encoding) : sources_(sources), encoding_(encoding) {}
        json operator()(const SourceRange& r);

    private:
        const SourceManager& sources_;
        PositionEncoding encoding_;
        std::map<std::string, PositionMapper> mappers_;
    };
    json to_lsp(const Diagnostic& d, Ranges& ranges) const;
    std::optional<Snapshot> snapshot(const std::string& uri);
    SessionOptions session_options() const {
        return SessionOptions{
            .mcore = options_.mcore, .mcore_path = options_.mcore_path, .config_file = options_.config_file};
    }
    // A session that reuses what earlier lints read and evaluated (modules, import graphs); callers hold lint_mutex_.
    LintSession session(SourceManager& sources);
    void register_file_watchers();  // asks the client for workspace/didChangeWatchedFiles, when it takes that

    ServerOptions options_;
    FrameReader reader_;
    FrameWriter writer_;
    PositionEncoding encoding_ = PositionEncoding::Utf16;
    bool initialized_ = false, shutdown_requested_ = false, exit_requested_ = false;

    std::shared_ptr<ConfigResolver> resolver_;
    // Front-end state kept for the whole session (see LintSession::keep_front_end_state); one lint uses it at a time.
    std::mutex lint_mutex_;
    std::shared_ptr<LintSession::FrontEndState> front_end_state_ = std::make_shared<LintSession::FrontEndState>();
    bool watch_files_ = false;      // the client takes dynamic registrations of workspace/didChangeWatchedFiles
    bool versioned_edits_ = false;  // the client takes workspace edits as versioned documentChanges
    bool show_document_ = false;    // the client takes window/showDocument
    std::mutex mutex_;              // guards everything below
    std::condition_variable wake_;
    std::map<std::string, Document> documents_;                         // by URI
    std::map<std::string, std::chrono::steady_clock::time_point> due_;  // pending lints
    // Documents linted whose imports are not scanned yet: scanned when no lint has been due for a typing pause, so
    // that neither the diagnostics nor the next edit's lint waits for them.
    std::set<std::string> unscanned_;
    std::chrono::steady_clock::time_point last_lint_end_;
    // What each document's last lint published, by target URI (a recipe's problem may sit in a helper module).
    std::map<std::string, std::map<std::string, json>> published_;
    bool stopping_ = false;
    std::thread worker_;
    // Reads the Megatron Core facts and the root's Bridge start-up checks the first lint will need while the client
    // opens its first document.
    std::thread warm_up_;
    void warm_up(const std::string& root_uri);
};

}  // namespace mbl::lsp
