#pragma once
// The LSP base protocol: messages framed by a `Content-Length: N` header block and N bytes of JSON-RPC 2.0.
#include <cstddef>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

namespace mbl::lsp {

using json = nlohmann::json;

// JSON-RPC and LSP error codes.
namespace error_code {
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
inline constexpr int kServerNotInitialized = -32002;
inline constexpr int kRequestFailed = -32803;
}  // namespace error_code

// Reads frames from a file descriptor. A broken header block is skipped up to the next `Content-Length:` header, so
// one bad frame costs only itself.
class FrameReader {
public:
    explicit FrameReader(int fd, std::size_t max_body = kDefaultMaxBody) : fd_(fd), max_body_(max_body) {}

    enum class Status {
        Message,    // `body` holds the JSON text
        BadHeader,  // a header block without a usable Content-Length; skipped
        TooLarge,   // Content-Length above the limit; the body was read and dropped
        End,        // end of input
    };
    struct Frame {
        Status status = Status::End;
        std::string body;
        std::string problem;  // for BadHeader / TooLarge
    };
    Frame next();

    // Larger than any config the linter accepts (SourceManager::max_file_bytes()) plus JSON escaping.
    static constexpr std::size_t kDefaultMaxBody = 200u << 20;

private:
    bool fill();  // reads more input into buffer_; false at end of input
    int fd_;
    std::size_t max_body_;
    std::string buffer_;
    std::size_t pos_ = 0;
};

// Writes frames; safe to call from several threads (responses from the reader, diagnostics from the lint worker).
class FrameWriter {
public:
    explicit FrameWriter(int fd) : fd_(fd) {}
    void write(const json& message);

private:
    int fd_;
    std::mutex mutex_;
};

json make_response(const json& id, json result);
json make_error(const json& id, int code, const std::string& message);
json make_notification(const std::string& method, json params);

}  // namespace mbl::lsp
