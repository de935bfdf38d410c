#include "integrations/lsp/json_rpc.hpp"

#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <charconv>

namespace mbl::lsp {
namespace {

bool iequals_prefix(std::string_view s, std::string_view prefix) {
    if (s.size() < prefix.size()) return false;
    for (std::size_t i = 0; i < prefix.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(s[i])) != std::tolower(static_cast<unsigned char>(prefix[i])))
            return false;
    return true;
}

// Position of the next "content-length:" (any case) at or after `from`, or npos.
std::size_t find_header(const std::string& s, std::size_t from) {
    for (std::size_t i = from; i + 15 <= s.size(); ++i)
        if ((s[i] == 'C' || s[i] == 'c') && iequals_prefix(std::string_view(s).substr(i), "content-length:")) return i;
    return std::string::npos;
}

}  // namespace

bool FrameReader::fill() {
    char chunk[65536];
    while (true) {
        ssize_t n = ::read(fd_, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        // Drop what has been consumed before growing the buffer.
        if (pos_ > 0) {
            buffer_.erase(0, pos_);
            pos_ = 0;
        }
        buffer_.append(chunk, static_cast<std::size_t>(n));
        return true;
    }
}

FrameReader::Frame FrameReader::next() {
    Frame frame;
    // 1. The header block, ended by an empty line (CRLF per the spec; a bare LF is accepted too).
    std::size_t header_end = std::string::npos, body_start = 0;
    while (true) {
        std::size_t crlf = buffer_.find("\r\n\r\n", pos_), lf = buffer_.find("\n\n", pos_);
        if (crlf != std::string::npos && (lf == std::string::npos || crlf < lf)) {
            header_end = crlf;
            body_start = crlf + 4;
        } else if (lf != std::string::npos) {
            header_end = lf;
            body_start = lf + 2;
        }
        if (header_end != std::string::npos) break;
        if (buffer_.size() - pos_ > 64 * 1024) {  // no header block is that long: skip to the next header
            std::size_t next = find_header(buffer_, pos_ + 1);
            pos_ = next == std::string::npos ? buffer_.size() : next;
            frame.status = Status::BadHeader;
            frame.problem = "header block too long or missing its empty line";
            return frame;
        }
        if (!fill()) {
            const bool leftover = buffer_.find_first_not_of(" \r\n\t", pos_) != std::string::npos;
            pos_ = buffer_.size();
            frame.status = leftover ? Status::BadHeader : Status::End;
            if (leftover) frame.problem = "input ended inside a header block";
            return frame;
        }
    }
    // 2. Parse the headers.
    std::string_view headers(buffer_.data() + pos_, header_end - pos_);
    long long length = -1;
    std::string problem;
    while (!headers.empty()) {
        std::size_t eol = headers.find('\n');
        std::string_view line = headers.substr(0, eol);
        headers = eol == std::string_view::npos ? std::string_view() : headers.substr(eol + 1);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.empty()) continue;
        const std::size_t colon = line.find(':');
        if (colon == std::string_view::npos) {
            problem = "a header line without ':'";
            break;
        }
        std::string_view value = line.substr(colon + 1);
        while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
        while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
        if (iequals_prefix(line, "content-length:")) {
            long long n = -1;
            auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
            if (ec != std::errc() || p != value.data() + value.size() || n < 0) {
                problem = "Content-Length is not a number";
                break;
            }
            length = n;
        }
    }
    if (problem.empty() && length < 0) problem = "no Content-Length header";
    if (!problem.empty()) {
        // Resynchronise on the next Content-Length header after this block.
        std::size_t next = find_header(buffer_, pos_ + 1);
        if (next != std::string::npos && next < body_start) next = find_header(buffer_, body_start);
        pos_ = next == std::string::npos ? body_start : next;
        frame.status = Status::BadHeader;
        frame.problem = problem;
        return frame;
    }
    pos_ = body_start;
    // 3. The body (dropped as it arrives when too large).
    const auto need = static_cast<std::size_t>(length);
    if (need > max_body_) {
        std::size_t left = need;
        while (left > 0) {
            std::size_t have = std::min(left, buffer_.size() - pos_);
            pos_ += have;
            left -= have;
            if (left > 0 && !fill()) break;
        }
        frame.status = Status::TooLarge;
        frame.problem =
            "message of " + std::to_string(need) + " bytes is above the limit of " + std::to_string(max_body_);
        return frame;
    }
    while (buffer_.size() - pos_ < need)
        if (!fill()) {
            pos_ = buffer_.size();
            frame.status = Status::End;
            return frame;
        }
    frame.status = Status::Message;
    frame.body = buffer_.substr(pos_, need);
    pos_ += need;
    return frame;
}

void FrameWriter::write(const json& message) {
    const std::string body = message.dump(-1, ' ', false, json::error_handler_t::replace);
    const std::string frame = "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    std::lock_guard lock(mutex_);
    std::size_t written = 0;
    while (written < frame.size()) {
        ssize_t n = ::write(fd_, frame.data() + written, frame.size() - written);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;  // the client is gone; the reader will see the end of input
        written += static_cast<std::size_t>(n);
    }
}

json make_response(const json& id, json result) {
    return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

json make_error(const json& id, int code, const std::string& message) {
    return {{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}};
}

json make_notification(const std::string& method, json params) {
    return {{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}};
}

}  // namespace mbl::lsp
