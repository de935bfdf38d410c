#include "integrations/lsp/server.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <unordered_set>

#include "core/effective_model.hpp"
#include "core/paths.hpp"
#include "core/revision_detection.hpp"
#include "core/schema.hpp"
#include "engine/fixes.hpp"
#include "engine/mcore_trees.hpp"
#include "engine/suppressions.hpp"
#include "integrations/lsp/hover.hpp"
#include "parser/front_end.hpp"
#include "report/report.hpp"
#include "rules/registry.hpp"
#include "version.hpp"

namespace mbl::lsp {

using Clock = std::chrono::steady_clock;

namespace {

// A malformed `params`: answered with InvalidParams.
struct BadParams : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

const json& need(const json& object, const char* key) {
    if (!object.is_object() || !object.contains(key)) throw BadParams(fmt::format("missing \"{}\"", key));
    return object[key];
}
std::string need_string(const json& object, const char* key) {
    const json& v = need(object, key);
    if (!v.is_string()) throw BadParams(fmt::format("\"{}\" must be a string", key));
    return v.get<std::string>();
}
int need_int(const json& object, const char* key) {
    const json& v = need(object, key);
    if (!v.is_number_integer()) throw BadParams(fmt::format("\"{}\" must be an integer", key));
    return v.get<int>();
}

int lsp_severity(Severity s) { return s == Severity::Error ? 1 : s == Severity::Warning ? 2 : 3; }

// A code action of the editor's "disable" kind: the suppression edit and the diagnostic it silences.
struct SuppressionAction {
    std::string title;
    TextEdit edit;
    const Diagnostic* diagnostic;
};

// "Disable CODE for this line" and "... for this file" for the rule diagnostics of `path` on lines first..last: one
// per code and line, one per code for the file. Input errors cannot be suppressed, nor RC900 (it reports a
// suppression).
std::vector<SuppressionAction> suppression_actions(const std::string& path, const std::string& text,
                                                   const std::vector<Diagnostic>& diagnostics, int first, int last) {
    const FrontEnd* front_end = front_end_for(path);
    if (!front_end) return {};
    const std::vector<SourceComment> comments = front_end->comments(text);
    std::vector<SuppressionAction> out;
    std::set<std::pair<std::string, int>> on_lines;
    std::set<std::string> in_file;
    for (const auto& d : diagnostics) {
        if (d.range.file != path || !d.range.valid() || d.is_input_error() || d.code == kUnusedSuppressionCode ||
            !find_rule(d.code) || d.range.line > last || std::max(d.range.end_line, d.range.line) < first)
            continue;
        if (on_lines.insert({d.code, d.range.line}).second)
            if (auto edit = suppress_on_line(path, text, comments, d.range.line, d.code))
                out.push_back({fmt::format("Disable {} for this line", d.code), std::move(*edit), &d});
        if (in_file.insert(d.code).second)
            if (auto edit = suppress_in_file(path, text, comments, d.code))
                out.push_back({fmt::format("Disable {} for this file", d.code), std::move(*edit), &d});
    }
    return out;
}

// The 0-based line of the heading of `code` in a local rules page (docs/rules.md); 0 when it is not found.
int heading_line(const std::string& page, std::string_view code) {
    std::ifstream in(page);
    std::string line;
    for (int n = 0; std::getline(in, line); ++n)
        if (line.starts_with("#") && line.find(fmt::format(" {}-", code)) != std::string::npos) return n;
    return 0;
}

}  // namespace

std::chrono::milliseconds lint_delay(std::optional<Clock::duration> last_lint, Clock::duration typing_gap,
                                     std::chrono::milliseconds debounce) {
    if (last_lint && typing_gap >= kTypingPause && *last_lint < typing_gap) return std::chrono::milliseconds(0);
    return debounce;
}

PublishCounters& publish_counters() {
    static PublishCounters counters;
    return counters;
}

Server::Server(ServerOptions options, int in_fd, int out_fd)
    : options_(std::move(options)),
      reader_(in_fd, options_.max_message_bytes),
      writer_(out_fd),
      resolver_(std::make_shared<ConfigResolver>(options_.config_file)) {}

Server::~Server() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    if (worker_.joinable()) worker_.join();
    if (warm_up_.joinable()) warm_up_.join();
}

void Server::warm_up(const std::string& root_uri) {
    if (warm_up_.joinable()) return;
    warm_up_ = std::thread([root_uri, mcore = options_.mcore] {
        try {
            const std::string root = root_uri.empty() ? std::string() : uri_to_path(root_uri);
            // The revision the root's checkout pins (or --mcore, or the default), its config classes and compiled
            // checks: loaded once per process, whoever asks first. A failure here is the first lint's to report.
            const Schema& schema = Schema::instance();
            const Revision* revision = mcore.empty() ? nullptr : schema.revision(mcore);
            if (!revision && !root.empty())
                if (auto detected = RevisionDetector().detect(root)) revision = detected->revision;
            if (!revision) revision = schema.revision(schema.default_revision());
            if (revision && revision->classes) revision->classes->check_program();
            // The root's own Bridge start-up checks, compiled once per checkout (engine/mcore_trees.hpp).
            if (!root.empty()) bridge_checks_for_file((std::filesystem::path(root) / "__init__.py").string());
        } catch (...) {  // NOLINT(bugprone-empty-catch): nothing to do; the lint reads the same facts and says why
        }
    });
}

int Server::run() {
    worker_ = std::thread([this] { worker(); });
    while (!exit_requested_) {
        FrameReader::Frame frame = reader_.next();
        if (frame.status == FrameReader::Status::End) break;
        if (frame.status == FrameReader::Status::BadHeader) {
            writer_.write(make_error(nullptr, error_code::kParseError, "malformed message header: " + frame.problem));
            continue;
        }
        if (frame.status == FrameReader::Status::TooLarge) {
            writer_.write(make_error(nullptr, error_code::kInvalidRequest, frame.problem));
            continue;
        }
        json message = json::parse(frame.body, nullptr, /*allow_exceptions=*/false);
        if (message.is_discarded()) {
            writer_.write(make_error(nullptr, error_code::kParseError, "message body is not valid JSON"));
            continue;
        }
        try {
            handle(message);
        } catch (const std::exception& e) {
            // Never reached for requests (handle_request answers them); a notification that failed is only logged.
            std::cerr << "mbridge-lint lsp: " << e.what() << '\n';
        }
    }
    // The protocol's exit code: 0 when `shutdown` came first, 1 otherwise (including a client that vanished).
    return exit_requested_ && shutdown_requested_ ? 0 : 1;
}

void Server::handle(const json& m) {
    if (!m.is_object() || m.value("jsonrpc", "") != "2.0") {
        const json id = m.is_object() && m.contains("id") && (m["id"].is_string() || m["id"].is_number_integer())
                            ? m["id"]
                            : json();
        writer_.write(make_error(id, error_code::kInvalidRequest, "not a JSON-RPC 2.0 message"));
        return;
    }
    const bool has_id = m.contains("id");
    if (has_id && !(m["id"].is_string() || m["id"].is_number_integer())) {
        writer_.write(make_error(nullptr, error_code::kInvalidRequest, "id must be a string or an integer"));
        return;
    }
    if (!m.contains("method")) {
        if (has_id && (m.contains("result") || m.contains("error"))) return;  // a response to us: none expected
        writer_.write(make_error(has_id ? m["id"] : json(), error_code::kInvalidRequest, "message has no method"));
        return;
    }
    if (!m["method"].is_string()) {
        writer_.write(make_error(has_id ? m["id"] : json(), error_code::kInvalidRequest, "method must be a string"));
        return;
    }
    const std::string method = m["method"].get<std::string>();
    static const json no_params = json::object();
    const json& params = m.contains("params") ? m["params"] : no_params;  // not copied: a didOpen may carry 16 MiB
    if (has_id) handle_request(method, m["id"], params);
    else handle_notification(method, params);
}

void Server::handle_request(const std::string& method, const json& id, const json& params) {
    if (shutdown_requested_) {
        writer_.write(make_error(id, error_code::kInvalidRequest, "the server is shutting down"));
        return;
    }
    if (!initialized_ && method != "initialize") {
        writer_.write(make_error(id, error_code::kServerNotInitialized, "initialize must be the first request"));
        return;
    }
    try {
        if (method == "initialize") {
            if (initialized_) {
                writer_.write(make_error(id, error_code::kInvalidRequest, "initialize was already received"));
                return;
            }
            json result = initialize(params);
            initialized_ = true;
            writer_.write(make_response(id, std::move(result)));
        } else if (method == "shutdown") {
            shutdown_requested_ = true;
            writer_.write(make_response(id, nullptr));
        } else if (method == "textDocument/hover") {
            writer_.write(make_response(id, hover(params)));
        } else if (method == "textDocument/codeAction") {
            writer_.write(make_response(id, code_action(params)));
        } else if (method == "workspace/executeCommand") {
            writer_.write(make_response(id, execute_command(params)));
        } else {
            writer_.write(
                make_error(id, error_code::kMethodNotFound, fmt::format("method \"{}\" is not supported", method)));
        }
    } catch (const BadParams& e) {
        writer_.write(make_error(id, error_code::kInvalidParams, fmt::format("{}: {}", method, e.what())));
    } catch (const json::exception& e) {
        writer_.write(make_error(id, error_code::kInvalidParams, fmt::format("{}: {}", method, e.what())));
    } catch (const std::exception& e) {
        writer_.write(make_error(id, error_code::kInternalError, fmt::format("{}: {}", method, e.what())));
    }
}

void Server::handle_notification(const std::string& method, const json& params) {
    if (method == "exit") {
        exit_requested_ = true;
        return;
    }
    if (!initialized_) return;  // notifications before initialize are dropped, as the protocol says
    try {
        if (method == "initialized") register_file_watchers();
        else if (method == "textDocument/didOpen") did_open(params);
        else if (method == "textDocument/didChange") did_change(params);
        else if (method == "textDocument/didSave") did_save(params);
        else if (method == "textDocument/didClose") did_close(params);
        else if (method == "workspace/didChangeWatchedFiles") did_change_watched_files(params);
        // $/cancelRequest (requests are answered before the next message is read), $/setTrace,
        // workspace/didChangeConfiguration and anything unknown need no action.
    } catch (const std::exception& e) {
        writer_.write(make_notification(
            "window/logMessage", {{"type", 1}, {"message", fmt::format("mbridge-lint: {}: {}", method, e.what())}}));
    }
}

json Server::initialize(const json& params) {
    if (!params.is_object()) throw BadParams("params must be an object");
    // UTF-8 positions when the client offers them (no transcoding); UTF-16, the protocol's default, otherwise.
    const json encodings = params.value("/capabilities/general/positionEncodings"_json_pointer, json::array());
    encoding_ = PositionEncoding::Utf16;
    if (encodings.is_array())
        for (const auto& e : encodings)
            if (e == "utf-8") encoding_ = PositionEncoding::Utf8;
    watch_files_ =
        params.value("/capabilities/workspace/didChangeWatchedFiles/dynamicRegistration"_json_pointer, false) == true;
    versioned_edits_ =
        params.value("/capabilities/workspace/workspaceEdit/documentChanges"_json_pointer, false) == true;
    show_document_ = params.value("/capabilities/window/showDocument/support"_json_pointer, false) == true;
    const json root_uri = params.value("rootUri", json());
    warm_up(root_uri.is_string() ? root_uri.get<std::string>() : std::string());
    return {{"capabilities",
             {{"positionEncoding", encoding_name(encoding_)},
              {"textDocumentSync", {{"openClose", true}, {"change", 2}, {"save", {{"includeText", false}}}}},
              {"hoverProvider", true},
              {"codeActionProvider", {{"codeActionKinds", {"quickfix", "source.fixAll.mbridge-lint"}}}},
              {"executeCommandProvider", {{"commands", {kShowDocumentationCommand}}}}}},
            {"serverInfo", {{"name", "mbridge-lint"}, {"version", MBRIDGE_LINT_VERSION}}}};
}

void Server::did_open(const json& params) {
    const json& td = need(params, "textDocument");
    Document doc;
    doc.uri = need_string(td, "uri");
    doc.path = uri_to_path(doc.uri);
    doc.language = td.value("languageId", "");
    doc.version = need_int(td, "version");
    doc.text = need_string(td, "text");
    doc.changed_at = Clock::now();
    {
        std::lock_guard lock(mutex_);
        documents_[doc.uri] = std::move(doc);
    }
    schedule(need_string(td, "uri"), std::chrono::milliseconds(0));
}

void Server::did_change(const json& params) {
    const json& td = need(params, "textDocument");
    const std::string uri = need_string(td, "uri");
    const json& changes = need(params, "contentChanges");
    if (!changes.is_array()) throw BadParams("contentChanges must be an array");
    std::string path;
    std::chrono::milliseconds delay{0};
    {
        std::lock_guard lock(mutex_);
        auto it = documents_.find(uri);
        if (it == documents_.end()) throw BadParams("didChange for a document that is not open: " + uri);
        Document& doc = it->second;
        std::string text = doc.text;
        for (const auto& change : changes) {
            const std::string replacement = need_string(change, "text");
            if (!change.contains("range")) {
                text = replacement;
                continue;
            }
            const PositionMapper map(text, encoding_);
            std::size_t b = map.offset(need(need(change, "range"), "start"));
            std::size_t e = map.offset(need(need(change, "range"), "end"));
            if (e < b) std::swap(b, e);
            text.replace(b, e - b, replacement);
        }
        doc.text = std::move(text);
        doc.version = need_int(td, "version");
        path = doc.path;
        const Clock::time_point now = Clock::now();
        delay = lint_delay(doc.lint_time, now - doc.changed_at, options_.debounce);
        doc.changed_at = now;
    }
    schedule(uri, delay);
    schedule_dependents(path);
}

void Server::did_save(const json& params) {
    const std::string uri = need_string(need(params, "textDocument"), "uri");
    const std::string path = uri_to_path(uri);
    if (is_config_file_name(path)) {
        // A saved configuration applies to every open document under it.
        resolver_->clear();
        schedule_all();
        return;
    }
    schedule(uri, std::chrono::milliseconds(0));
    schedule_dependents(path);
}

void Server::did_close(const json& params) {
    const std::string uri = need_string(need(params, "textDocument"), "uri");
    {
        std::lock_guard lock(mutex_);
        documents_.erase(uri);
        due_.erase(uri);
    }
    publish(uri, {});  // withdraws what this document's lints published
}

void Server::register_file_watchers() {
    if (!watch_files_) return;
    // Files changed outside the editor (a git checkout, a generator): the client tells us, and imports stay right.
    const json watchers = json::array({{{"globPattern", "**/*.py"}},
                                       {{"globPattern", "**/*.{yaml,yml}"}},
                                       {{"globPattern", "**/{.mbridge-lint.toml,pyproject.toml}"}}});
    writer_.write({{"jsonrpc", "2.0"},
                   {"id", "mbridge-lint/watch-files"},
                   {"method", "client/registerCapability"},
                   {"params",
                    {{"registrations", json::array({{{"id", "mbridge-lint/watch-files"},
                                                     {"method", "workspace/didChangeWatchedFiles"},
                                                     {"registerOptions", {{"watchers", watchers}}}}})}}}});
}

void Server::did_change_watched_files(const json& params) {
    const json& changes = need(params, "changes");
    if (!changes.is_array()) throw BadParams("changes must be an array");
    for (const auto& c : changes) {
        const std::string path = uri_to_path(need_string(c, "uri"));
        if (is_config_file_name(path)) {
            resolver_->clear();
            schedule_all();
            return;
        }
        // FileChangeType 1 (created) and 3 (deleted) change which modules exist: imports resolve anew. Edits of
        // existing files are noticed anyway (each lint checks the files it reuses).
        const int type = c.value("type", 2);
        if (type == 1 || type == 3) {
            {
                std::lock_guard lock(lint_mutex_);
                front_end_state_ = std::make_shared<LintSession::FrontEndState>();
                forget_resolved_paths();  // a created or deleted link changes what a folder resolves to
            }
            schedule_all();
            return;
        }
        schedule_dependents(path);
    }
}

std::optional<Server::Snapshot> Server::snapshot(const std::string& uri) {
    std::lock_guard lock(mutex_);
    auto it = documents_.find(uri);
    if (it == documents_.end()) return std::nullopt;
    return Snapshot{it->second.uri, it->second.path, it->second.text, it->second.version};
}

void Server::schedule(const std::string& uri, std::chrono::milliseconds delay) {
    {
        std::lock_guard lock(mutex_);
        // A newer edit postpones the pending lint (debounce); the worker drops results of an outdated version.
        due_[uri] = Clock::now() + delay;
    }
    wake_.notify_all();
}

void Server::schedule_dependents(const std::string& path) {
    std::vector<std::string> uris;
    {
        std::lock_guard lock(mutex_);
        const std::string changed = normalized_path(path);
        // A document whose imports are not scanned yet for its version (they are, right after its diagnostics are
        // published) may import the file: linted again, to be sure.
        for (const auto& [uri, doc] : documents_)
            if (doc.dependencies.count(changed) ||
                (doc.dependencies_version != doc.version && normalized_path(doc.path) != changed))
                uris.push_back(uri);
    }
    for (const auto& uri : uris) schedule(uri, options_.debounce);
}

void Server::schedule_all() {
    std::vector<std::string> uris;
    {
        std::lock_guard lock(mutex_);
        for (const auto& [uri, doc] : documents_) uris.push_back(uri);
    }
    for (const auto& uri : uris) schedule(uri, std::chrono::milliseconds(0));
}

void Server::worker() {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
        const Clock::time_point now = Clock::now();
        auto next = std::min_element(due_.begin(), due_.end(),
                                     [](const auto& a, const auto& b) { return a.second < b.second; });
        if (next != due_.end() && next->second <= now) {
            const std::string uri = next->first;
            due_.erase(next);
            lock.unlock();
            try {
                if (auto snap = snapshot(uri)) lint_and_publish(*snap);
            } catch (const std::exception& e) {
                std::cerr << "mbridge-lint lsp: linting " << uri << " failed: " << e.what() << '\n';
            }
            lock.lock();
            last_lint_end_ = Clock::now();
            continue;
        }
        const Clock::time_point scan_at = last_lint_end_ + kTypingPause;
        if (!unscanned_.empty() && scan_at <= now) {
            const std::string uri = *unscanned_.begin();
            unscanned_.erase(unscanned_.begin());
            lock.unlock();
            try {
                scan_dependencies(uri);
            } catch (const std::exception& e) {
                std::cerr << "mbridge-lint lsp: reading the imports of " << uri << " failed: " << e.what() << '\n';
            }
            ++publish_counters().work_finished;
            lock.lock();
            continue;
        }
        Clock::time_point wake = Clock::time_point::max();
        if (next != due_.end()) wake = next->second;
        if (!unscanned_.empty()) wake = std::min(wake, scan_at);
        if (wake == Clock::time_point::max()) wake_.wait(lock);
        else wake_.wait_until(lock, wake);
    }
}

LintSession Server::session(SourceManager& sources) {
    LintSession session(session_options(), sources, resolver_);
    session.keep_front_end_state(front_end_state_);
    return session;
}

void Server::add_open_documents(SourceManager& sources, const Snapshot& doc) {
    {
        std::lock_guard lock(mutex_);
        for (const auto& [uri, d] : documents_) {
            sources.add(d.path, d.text);
            // Imported modules are looked up by their normalized path: an open helper's unsaved text is what a
            // recipe importing it sees.
            if (const std::string normal = normalized_path(d.path); normal != d.path) sources.add(normal, d.text);
        }
    }
    sources.add(doc.path, doc.text);
}

FileResult Server::lint_now(const Snapshot& doc, SourceManager& sources) {
    add_open_documents(sources, doc);
    LintSession session = this->session(sources);
    // A newer edit makes this lint pointless: stop between configs (a recipe module defines many).
    session.set_cancellation([this, uri = doc.uri, version = doc.version] {
        std::lock_guard lock(mutex_);
        auto it = documents_.find(uri);
        return it == documents_.end() || it->second.version != version;
    });
    return session.lint(doc.path, /*allow_skip=*/true);
}

void Server::lint_and_publish(const Snapshot& doc) {
    const Clock::time_point started = Clock::now();
    ++publish_counters().work_started;
    struct Finished {
        ~Finished() { ++publish_counters().work_finished; }
    } finished;
    SourceManager sources;
    std::vector<Diagnostic> diags;
    FileResult r;  // freed after publishing: the config trees of a large recipe file take a while to free
    const bool config_file = is_config_file_name(doc.path);
    if (config_file) {
        sources.add(doc.path, doc.text);
        diags = load_config_file(doc.path, &doc.text).errors;
    } else if (front_end_for(doc.path)) {
        std::lock_guard lock(lint_mutex_);
        r = lint_now(doc, sources);
        if (r.cancelled) return;  // a newer version is scheduled
        diags = std::move(r.diagnostics);
    } else {
        return;  // not a file this server lints
    }
    std::map<std::string, json> by_uri{{doc.uri, json::array()}};
    Ranges ranges(sources, encoding_);
    std::map<std::string, std::string> uris;            // file -> URI, worked out once per file
    std::map<std::string, OmittedDiagnostics> omitted;  // by URI: past the cap, counted but not converted
    for (const auto& d : diags) {
        const std::string file = d.range.file.empty() ? doc.path : d.range.file;
        auto uri = uris.find(file);
        if (uri == uris.end()) uri = uris.emplace(file, file == doc.path ? doc.uri : path_to_uri(file)).first;
        json& list = by_uri[uri->second];
        if (list.size() < options_.max_diagnostics) {
            list.push_back(to_lsp(d, ranges));
            continue;
        }
        OmittedDiagnostics& left_out = omitted[uri->second];
        left_out.add(d.severity, left_out.count() == 0 ? ranges(d.range) : json());
    }
    for (const auto& [uri, left_out] : omitted)
        by_uri[uri].push_back(left_out.summary(options_.max_diagnostics, uri_to_path(uri)));
    {
        std::lock_guard lock(mutex_);
        auto it = documents_.find(doc.uri);
        // Edited (or closed) while this lint ran: a newer lint is scheduled; these results are stale.
        if (it == documents_.end() || it->second.version != doc.version) return;
        it->second.lint_time = Clock::now() - started;
    }
    publish(doc.uri, by_uri);
    if (config_file || doc.text.size() > SourceManager::max_file_bytes()) return;  // no imports to watch
    std::lock_guard lock(mutex_);
    if (unscanned_.insert(doc.uri).second) ++publish_counters().work_started;  // the scan, queued
}

void Server::scan_dependencies(const std::string& uri) {
    const std::optional<Snapshot> doc = snapshot(uri);
    if (!doc) return;
    std::set<std::string> dependencies;
    {
        std::lock_guard lock(lint_mutex_);
        // Asked with the editor's buffers alone: the lint's sources also hold the text of every module it read,
        // which are not buffers (a module read from disk is checked with a stat, not read again).
        SourceManager buffers;
        add_open_documents(buffers, *doc);
        dependencies = session(buffers).dependencies(doc->path);
    }
    std::lock_guard lock(mutex_);
    // Edited meanwhile: the new version's lint queues its own scan.
    if (auto it = documents_.find(uri); it != documents_.end() && it->second.version == doc->version) {
        it->second.dependencies = std::move(dependencies);
        it->second.dependencies_version = doc->version;
    }
}

void Server::publish(const std::string& source_uri, const std::map<std::string, json>& by_uri) {
    std::vector<json> messages;
    {
        std::lock_guard lock(mutex_);
        std::set<std::string> targets;
        for (const auto& [uri, list] : published_[source_uri]) targets.insert(uri);
        for (const auto& [uri, list] : by_uri) targets.insert(uri);
        if (by_uri.empty()) published_.erase(source_uri);
        else published_[source_uri] = by_uri;
        for (const auto& target : targets) {
            // A file's diagnostics are the union of what every open document's lint found in it; one that two
            // documents found is sent once (a hash set of their serialized forms: linear in their number).
            json all = json::array();
            std::unordered_set<std::string> seen;
            const bool several = std::count_if(published_.begin(), published_.end(),
                                               [&](const auto& p) { return p.second.count(target) > 0; }) > 1;
            for (const auto& [source, lists] : published_)
                if (auto it = lists.find(target); it != lists.end())
                    for (const auto& d : it->second) {
                        if (several) ++publish_counters().duplicate_checks;
                        if (!several || seen.insert(d.dump()).second) all.push_back(d);
                    }
            // Each lint's list is capped; their union is capped again, with one summary for all they left out.
            if (several) all = cap_diagnostics(all, options_.max_diagnostics, uri_to_path(target));
            json params{{"uri", target}, {"diagnostics", std::move(all)}};
            if (auto doc = documents_.find(target); doc != documents_.end()) params["version"] = doc->second.version;
            messages.push_back(make_notification("textDocument/publishDiagnostics", std::move(params)));
        }
    }
    for (const auto& m : messages) writer_.write(m);
}

json Server::versioned(json changes, const std::string& linted_uri, int linted_version) {
    if (!versioned_edits_) return json{{"changes", std::move(changes)}};
    // Each open document's edits name the version they were computed for: the client refuses them once the document
    // has changed since, so a fix never overwrites an edit made in the meantime. Files not open carry no version.
    json document_changes = json::array();
    std::lock_guard lock(mutex_);
    for (auto& [uri, edits] : changes.items()) {
        const auto open = documents_.find(uri);
        const json version = uri == linted_uri          ? json(linted_version)
                             : open != documents_.end() ? json(open->second.version)
                                                        : json(nullptr);
        document_changes.push_back(
            {{"textDocument", {{"uri", uri}, {"version", version}}}, {"edits", std::move(edits)}});
    }
    return json{{"documentChanges", std::move(document_changes)}};
}

json Server::Ranges::operator()(const SourceRange& r) {
    auto it = mappers_.find(r.file);
    if (it == mappers_.end()) {
        const std::string* text = sources_.text(r.file);
        if (!text) {
            // Text not at hand (a file that vanished): byte columns are the best guess.
            const int line = std::max(r.line - 1, 0), col = std::max(r.column - 1, 0);
            const int end_line = std::max(r.end_line - 1, line), end_col = std::max(r.end_column - 1, 0);
            return {{"start", {{"line", line}, {"character", col}}},
                    {"end", {{"line", end_line}, {"character", end_col}}}};
        }
        it = mappers_.emplace(r.file, PositionMapper(*text, encoding_)).first;
        ++publish_counters().texts_indexed;
    }
    return it->second.range(r);
}

json Server::to_lsp(const Diagnostic& d, Ranges& ranges) const {
    ++publish_counters().diagnostics_converted;
    std::string message = d.message;
    json related = json::array();
    for (const auto& n : d.notes) {
        if (n.range.valid())
            related.push_back({{"location", {{"uri", path_to_uri(n.range.file)}, {"range", ranges(n.range)}}},
                               {"message", n.message}});
        else message += "\nnote: " + n.message;
    }
    if (d.fix) message += "\nhelp: " + d.fix->title;
    json j{{"range", ranges(d.range)},
           {"severity", lsp_severity(d.severity)},
           {"code", d.code},
           {"source", "mbridge-lint"},
           {"message", message}};
    if (const std::string url = rule_doc_url(d.code); !url.empty()) j["codeDescription"] = {{"href", url}};
    if (!related.empty()) j["relatedInformation"] = std::move(related);
    if (d.code == "RC900") j["tags"] = {1};  // Unnecessary: editors fade the stale suppression
    return j;
}

json Server::hover(const json& params) {
    const std::string uri = need_string(need(params, "textDocument"), "uri");
    auto doc = snapshot(uri);
    if (!doc || !front_end_for(doc->path) || is_config_file_name(doc->path)) return nullptr;
    const std::size_t at = PositionMapper(doc->text, encoding_).offset(need(params, "position"));
    SourceManager sources;
    std::lock_guard lock(lint_mutex_);
    FileResult r = lint_now(*doc, sources);
    LineIndex lines(doc->text);
    auto contains = [&](const SourceRange& range) {
        if (!range.valid() || range.file != doc->path) return false;
        const std::size_t b = lines.offset(range.line, range.column),
                          e = lines.offset(range.end_line, range.end_column);
        return b <= at && at <= e;
    };
    LintSession session = this->session(sources);
    Ranges ranges(sources, encoding_);
    for (std::size_t i = 0; i < r.configs.size(); ++i) {
        for (const Value::Entry* e : model_entries(r.configs[i].root)) {
            if (!contains(e->key_range) && !contains(e->value.prov().range)) continue;
            auto model = session.effective_model(r, i);
            const auto field = FieldName::find(e->key);  // a key that is no field has nothing to show
            if (!model || !field || !model->has(*field)) return nullptr;
            const SourceRange span = contains(e->value.prov().range) ? e->value.prov().range : e->key_range;
            return {{"contents", {{"kind", "markdown"}, {"value", hover_markdown(*model, *field, &e->value)}}},
                    {"range", ranges(span)}};
        }
    }
    return nullptr;
}

json Server::code_action(const json& params) {
    const std::string uri = need_string(need(params, "textDocument"), "uri");
    auto doc = snapshot(uri);
    if (!doc) return json::array();
    const PositionMapper map(doc->text, encoding_);
    const json& range = need(params, "range");
    const LineIndex doc_lines(doc->text);
    const int want_first_line = doc_lines.line_of(map.offset(need(range, "start")));
    const int want_last_line = doc_lines.line_of(map.offset(need(range, "end")));
    std::vector<std::string> only;
    if (params.contains("context") && params["context"].contains("only"))
        for (const auto& k : params["context"]["only"]) only.push_back(k.get<std::string>());
    auto wanted = [&](const std::string& kind) {
        if (only.empty()) return true;
        return std::any_of(only.begin(), only.end(),
                           [&](const std::string& o) { return kind == o || kind.rfind(o + ".", 0) == 0; });
    };

    SourceManager sources;
    std::lock_guard lock(lint_mutex_);
    FileResult r = lint_now(*doc, sources);
    Ranges ranges(sources, encoding_);
    json actions = json::array();
    auto workspace_edit = [&](const std::vector<TextEdit>& edits) {
        json changes = json::object();
        for (const auto& e : edits) {
            const std::string target = e.range.file == doc->path ? uri : path_to_uri(e.range.file);
            changes[target].push_back({{"range", ranges(e.range)}, {"newText", e.replacement}});
        }
        return versioned(std::move(changes), uri, doc->version);
    };
    if (wanted("quickfix")) {
        // A fix that would change another recipe's run (one importing the file its edit lands in) is shown disabled,
        // with that recipe named, as `--fix` leaves it; asked only for the fixes on the requested lines.
        std::optional<LintSession> importer_session;
        std::optional<ImporterFixCheck> importers;
        for (const auto& d : r.diagnostics) {
            if (!d.fix || d.fix->edits.empty() || d.range.file != doc->path) continue;
            // Offered for every diagnostic on the lines the request covers: editors ask with the cursor position,
            // which is rarely inside the diagnostic's own range.
            const int end_line = std::max(d.range.end_line, d.range.line);
            if (!d.range.valid() || d.range.line > want_last_line || end_line < want_first_line) continue;
            json action = {
                {"title", d.fix->is_safe ? d.fix->title : d.fix->title + " (unsafe: changes what the run does)"},
                {"kind", "quickfix"},
                {"diagnostics", json::array({to_lsp(d, ranges)})}};
            const std::string recipe = recipe_of(d);
            const auto own = std::find_if(r.configs.begin(), r.configs.end(),
                                          [&](const ParsedConfig& c) { return c.label == recipe; });
            std::optional<std::string> held;
            if (own != r.configs.end()) {
                if (!importers) {
                    importer_session.emplace(this->session(sources));
                    importers.emplace(*importer_session, doc->path);
                }
                held = importers->held_by(d, own->root);
            }
            if (held) {
                action["disabled"] = {{"reason", *held}};
            } else {
                action["isPreferred"] = d.fix->is_safe;
                action["edit"] = workspace_edit(d.fix->edits);
            }
            actions.push_back(std::move(action));
        }
    }
    if (wanted("quickfix"))
        for (auto& a : suppression_actions(doc->path, doc->text, r.diagnostics, want_first_line, want_last_line))
            actions.push_back({{"title", a.title},
                               {"kind", "quickfix"},
                               {"diagnostics", json::array({to_lsp(*a.diagnostic, ranges)})},
                               {"edit", workspace_edit({a.edit})}});
    if (only.empty()) {
        std::set<std::string> documented;
        for (const auto& d : r.diagnostics) {
            if (d.range.file != doc->path || d.range.line > want_last_line ||
                std::max(d.range.end_line, d.range.line) < want_first_line || rule_doc_url(d.code).empty() ||
                !documented.insert(d.code).second)
                continue;
            actions.push_back({{"title", fmt::format("Show documentation of {}", d.code)},
                               {"command",
                                {{"title", fmt::format("Show documentation of {}", d.code)},
                                 {"command", kShowDocumentationCommand},
                                 {"arguments", json::array({d.code})}}}});
        }
    }
    if (wanted("source.fixAll.mbridge-lint")) {
        LintSession session = this->session(sources);
        FixOutcome fixed = fix_file(session, doc->path, FixOptions{}, /*allow_skip=*/true);
        // One edit per changed file, replacing its whole text (computed against the text before fixing).
        json changes = json::object();
        for (const auto& [file, text] : fixed.fixed) {
            const std::string& before = fixed.original[file];
            const PositionMapper m(before, encoding_);
            const std::string target = file == doc->path ? uri : path_to_uri(file);
            changes[target].push_back(
                {{"range", {{"start", m.position(0)}, {"end", m.position(before.size())}}}, {"newText", text}});
        }
        if (!changes.empty())
            actions.push_back({{"title", fmt::format("Fix all safe mbridge-lint problems ({})", fixed.applied)},
                               {"kind", "source.fixAll.mbridge-lint"},
                               {"edit", versioned(std::move(changes), uri, doc->version)}});
    }
    return actions;
}

json Server::execute_command(const json& params) {
    const std::string command = need_string(params, "command");
    if (command != kShowDocumentationCommand) throw BadParams(fmt::format("unknown command \"{}\"", command));
    const json& arguments = need(params, "arguments");
    if (!arguments.is_array() || arguments.size() != 1 || !arguments[0].is_string())
        throw BadParams("arguments must be one rule code");
    show_documentation(arguments[0].get<std::string>());
    return nullptr;
}

// Opens the rule's entry in docs/rules.md: in the editor at its heading (a local page) or in the browser (a web
// page), where the client takes window/showDocument; else the entry's text as a message.
void Server::show_documentation(const std::string& code) {
    const Rule* rule = find_rule(code);
    const std::string url = rule_doc_url(code);
    if (!rule || url.empty()) throw BadParams(fmt::format("no documentation for \"{}\"", code));
    const RuleInfo& info = rule->info();
    if (show_document_) {
        json params{{"uri", url}, {"takeFocus", true}};
        if (url.starts_with("file://")) {
            const std::string page = url.substr(0, url.find('#'));
            const int line = heading_line(uri_to_path(page), info.code);
            params["uri"] = page;
            params["selection"] = {{"start", {{"line", line}, {"character", 0}}},
                                   {"end", {{"line", line}, {"character", 0}}}};
        } else {
            params["external"] = true;
        }
        writer_.write({{"jsonrpc", "2.0"},
                       {"id", fmt::format("mbridge-lint/show-documentation/{}", code)},
                       {"method", "window/showDocument"},
                       {"params", std::move(params)}});
        return;
    }
    writer_.write(make_notification(
        "window/showMessage",
        {{"type", 3},
         {"message", fmt::format("{} {}: {}\n\n{}\n\n{}", info.code, info.name, info.summary, info.doc, url)}}));
}

}  // namespace mbl::lsp
