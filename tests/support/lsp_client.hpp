#pragma once
// A minimal LSP client for tests: speaks Content-Length framed JSON-RPC over two file descriptors, either to the real
// `mbridge-lint lsp` process (spawn) or to a server running in the test process.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace mbl::test {

class LspClient {
public:
    using json = nlohmann::json;

    LspClient(int write_fd, int read_fd, pid_t pid = -1) : out_(write_fd), in_(read_fd), pid_(pid) {}

    // Starts `binary lsp args...` with its stdin/stdout connected to the client (stderr inherited).
    static LspClient spawn(const std::string& binary, const std::vector<std::string>& args) {
        int to_server[2], from_server[2];
        if (pipe(to_server) != 0 || pipe(from_server) != 0) throw std::runtime_error("pipe failed");
        pid_t pid = fork();
        if (pid == 0) {
            dup2(to_server[0], 0);
            dup2(from_server[1], 1);
            close(to_server[1]);
            close(from_server[0]);
            std::vector<std::string> all{binary, "lsp"};
            all.insert(all.end(), args.begin(), args.end());
            std::vector<char*> argv;
            for (auto& a : all) argv.push_back(a.data());
            argv.push_back(nullptr);
            execv(binary.c_str(), argv.data());
            _exit(127);
        }
        close(to_server[0]);
        close(from_server[1]);
        signal(SIGPIPE, SIG_IGN);
        return LspClient(to_server[1], from_server[0], pid);
    }

    LspClient(LspClient&& o) noexcept : out_(o.out_), in_(o.in_), pid_(o.pid_), buffer_(std::move(o.buffer_)) {
        o.out_ = o.in_ = -1;
        o.pid_ = -1;
    }
    ~LspClient() {
        close_input();
        if (in_ >= 0) close(in_);
        if (pid_ > 0) {
            kill(pid_, SIGKILL);
            waitpid(pid_, nullptr, 0);
        }
    }

    void send_raw(const std::string& bytes) {
        size_t done = 0;
        while (done < bytes.size()) {
            ssize_t n = write(out_, bytes.data() + done, bytes.size() - done);
            if (n <= 0) throw std::runtime_error("write to server failed");
            done += static_cast<size_t>(n);
        }
    }
    void send(const json& message) {
        const std::string body = message.dump();
        send_raw("Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body);
    }
    int request(const std::string& method, json params) {
        const int id = next_id_++;
        send({{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}});
        return id;
    }
    void notify(const std::string& method, json params) {
        send({{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}});
    }
    void close_input() {
        if (out_ >= 0) close(out_);
        out_ = -1;
    }

    // The next message, or nullopt after `timeout` (or when the server closed its output).
    std::optional<json> read(std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        while (true) {
            const size_t header_end = buffer_.find("\r\n\r\n");
            if (header_end != std::string::npos) {
                const size_t at = buffer_.find("Content-Length: ");
                const size_t length = std::stoul(buffer_.substr(at + 16, header_end - at - 16));
                if (buffer_.size() >= header_end + 4 + length) {
                    json message = json::parse(buffer_.substr(header_end + 4, length));
                    buffer_.erase(0, header_end + 4 + length);
                    received_.push_back(message);
                    return message;
                }
            }
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0) return std::nullopt;
            pollfd p{in_, POLLIN, 0};
            if (poll(&p, 1, static_cast<int>(left.count())) <= 0) return std::nullopt;
            char chunk[65536];
            ssize_t n = ::read(in_, chunk, sizeof chunk);
            if (n <= 0) return std::nullopt;
            buffer_.append(chunk, static_cast<size_t>(n));
        }
    }
    // Reads until a message satisfies `match`; the others are kept in received().
    std::optional<json> wait_for(const std::function<bool(const json&)>& match,
                                 std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        while (true) {
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0) return std::nullopt;
            auto m = read(left);
            if (!m) return std::nullopt;
            if (match(*m)) return m;
        }
    }
    std::optional<json> response(int id) {
        return wait_for([id](const json& m) { return m.contains("id") && m["id"] == id && !m.contains("method"); });
    }
    std::optional<json> diagnostics(const std::string& uri, int version = -1,
                                    std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
        return wait_for(
            [&](const json& m) {
                return m.value("method", "") == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri &&
                       (version < 0 || m["params"].value("version", -1) == version);
            },
            timeout);
    }
    const std::vector<json>& received() const { return received_; }

    // Waits for the process to end; its exit code, or nullopt if it is still running after `timeout`.
    std::optional<int> wait_exit(std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        while (std::chrono::steady_clock::now() < deadline) {
            int status = 0;
            pid_t r = waitpid(pid_, &status, WNOHANG);
            if (r == pid_) {
                pid_ = -1;
                return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            }
            usleep(10000);
        }
        return std::nullopt;
    }

private:
    int out_, in_;
    pid_t pid_;
    int next_id_ = 1;
    std::string buffer_;
    std::vector<json> received_;
};

}  // namespace mbl::test
