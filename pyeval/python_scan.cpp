#include "pyeval/python_scan.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <vector>

namespace mbl::py {

namespace {

// Byte classes by table: the scan runs over every byte of every Python file the walk reads, and <cctype>'s calls
// (locale-aware, out of line) cost about as much as the rest of the scan.
enum ByteClass : unsigned char { kWord = 1, kDigit = 2, kSpace = 4 };
constexpr std::array<unsigned char, 256> kByteClass = [] {
    std::array<unsigned char, 256> t{};
    for (int c = 0; c < 256; ++c) {
        const bool digit = c >= '0' && c <= '9';
        const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
        if (digit || alpha || c == '_' || c >= 0x80) t[c] |= kWord;
        if (digit) t[c] |= kDigit;
        if (c == ' ' || (c >= '\t' && c <= '\r')) t[c] |= kSpace;
    }
    return t;
}();
bool word_byte(unsigned char c) { return (kByteClass[c] & kWord) != 0; }
bool digit_byte(unsigned char c) { return (kByteClass[c] & kDigit) != 0; }
bool space_byte(unsigned char c) { return (kByteClass[c] & kSpace) != 0; }

class Scanner {
public:
    Scanner(std::string_view text, std::uint64_t max_tokens, std::string* blanked)
        : text_(text), max_tokens_(max_tokens), blanked_(blanked) {}

    PythonScan run() {
        code(0);
        return out_;
    }

private:
    bool at_end() const { return i_ >= text_.size() || out_.problem != PythonScan::Problem::None; }
    char peek(std::size_t ahead = 0) const { return i_ + ahead < text_.size() ? text_[i_ + ahead] : '\0'; }

    void fail(PythonScan::Problem p, std::size_t at) {
        if (out_.problem == PythonScan::Problem::None) {
            out_.problem = p;
            out_.at = at;
        }
    }
    void token(std::size_t start) {
        if (logical_line_start_) indent(start);
        line_has_token_ = true;
        bare_continuations_ = 0;
        if (++out_.tokens > max_tokens_) fail(PythonScan::Problem::TooManyTokens, start);
    }

    // Code, at the top level (fdepth 0) or inside an f-string's replacement field, where it returns at the `}`, `:`
    // or `!` (not `!=`) that ends the expression outside any bracket the field opened.
    void code(int fdepth) {
        int field_brackets = 0;
        while (!at_end()) {
            const std::size_t start = i_;
            const auto c = static_cast<unsigned char>(text_[i_]);
            if (c == '\r' && peek(1) == '\n') {
                ++i_;  // one line end, read at its '\n'
            } else if (c == '\n' || c == '\r') {
                line_has_token_ = false;
                // A new logical line unless a bracket is open, a backslash joined this line to the next, or the line
                // end is inside an f-string's replacement field.
                if (brackets_ == 0 && !joined_ && fdepth == 0) logical_line_start_ = true;
                joined_ = false;
                ++i_;
                line_begin_ = i_;
            } else if (c == ' ' || c == '\t' || c == '\f') {
                ++i_;  // a run of them at once (an indentation)
                while (i_ < text_.size() && (text_[i_] == ' ' || text_[i_] == '\t' || text_[i_] == '\f')) ++i_;
            } else if (c == '\\') {
                joined_ = true;
                if (line_has_token_) {
                    bare_continuations_ = 0;
                } else if (++bare_continuations_ > kPythonMaxBareContinuations) {
                    fail(PythonScan::Problem::TooManyBareContinuations, start);
                }
                ++i_;
            } else if (c == '#') {
                bare_continuations_ = 0;
                // To the line's end: the first "\n" (memchr), or a "\r" before it.
                const std::size_t nl = std::min(text_.find('\n', i_), text_.size());
                i_ = std::min(nl, i_ + std::min(text_.substr(i_, nl - i_).find('\r'), nl - i_));
                // In a replacement field too: there a comment runs to the line's end, the `}"` included, for Python
                // 3.12 and tree-sitter alike (older Pythons refuse the `#`).
                blank(start, i_);
            } else if (c == '"' || c == '\'') {
                token(start);
                string(false);
            } else if (word_byte(c) && !digit_byte(c)) {
                while (i_ < text_.size() && word_byte(static_cast<unsigned char>(text_[i_]))) ++i_;
                bool formatted = false;
                token(start);
                if ((peek() == '"' || peek() == '\'') &&
                    python_string_prefix(text_.substr(start, i_ - start), formatted))
                    string(formatted);
            } else if (digit_byte(c) || (c == '.' && digit_byte(static_cast<unsigned char>(peek(1))))) {
                while (i_ < text_.size() && (word_byte(static_cast<unsigned char>(text_[i_])) || text_[i_] == '.'))
                    ++i_;
                token(start);
            } else if (c == '(' || c == '[' || c == '{') {
                token(start);
                ++i_;
                ++field_brackets;
                if (++brackets_ > kPythonMaxBrackets) fail(PythonScan::Problem::TooManyBrackets, start);
            } else if (c == ')' || c == ']' || c == '}') {
                if (fdepth > 0 && field_brackets == 0) return;  // the field's closing brace
                token(start);
                ++i_;
                --field_brackets;
                if (brackets_ > 0) --brackets_;
            } else if (fdepth > 0 && field_brackets == 0 && (c == ':' || (c == '!' && peek(1) != '='))) {
                return;  // a format spec or conversion follows
            } else {
                // One operator token per run of operator characters (`**=`, `->`); an approximation, as is `1e-5`
                // counting three.
                while (i_ < text_.size()) {
                    const auto o = static_cast<unsigned char>(text_[i_]);
                    if (word_byte(o) || space_byte(o) || o == '"' || o == '\'' || o == '#' || o == '\\' || o == '(' ||
                        o == ')' || o == '[' || o == ']' || o == '{' || o == '}')
                        break;
                    if (fdepth > 0 && field_brackets == 0 && (o == ':' || o == '!') && i_ > start) break;
                    ++i_;
                }
                if (i_ == start) ++i_;
                token(start);
            }
        }
    }

    // From the opening quote at i_ to past the closing one. A backslash keeps the next character in the string, raw
    // or not (r"\"" is one string); a single-quoted string ends at its line's end, as Python's tokenizer reports it.
    void string(bool formatted) {
        const char quote = text_[i_];
        const bool triple = peek(1) == quote && peek(2) == quote;
        i_ += triple ? 3 : 1;
        while (!at_end()) {
            const char c = text_[i_];
            if (c == '\\') {
                i_ += 2;
            } else if (c == quote && (!triple || (peek(1) == quote && peek(2) == quote))) {
                i_ += triple ? 3 : 1;
                return;
            } else if ((c == '\n' || c == '\r') && !triple) {
                return;
            } else if (formatted && c == '{') {
                if (peek(1) == '{') {
                    i_ += 2;
                } else {
                    field();
                }
            } else {
                ++i_;
            }
        }
    }

    // An f-string's replacement field from its `{`: the expression, a conversion, a format spec (text with fields of
    // its own), to past the closing `}`. Each field open counts as a level of nesting, which bounds the recursion.
    void field() {
        if (++fields_ > kPythonMaxFstringNesting) {
            fail(PythonScan::Problem::FstringTooNested, i_);
            return;
        }
        ++i_;
        code(fields_);
        finish_field();
        --fields_;
    }
    void finish_field() {
        if (at_end()) return;
        if (peek() == '!') {
            ++i_;
            while (i_ < text_.size() && word_byte(static_cast<unsigned char>(text_[i_]))) ++i_;
        }
        if (peek() == ':') {
            ++i_;
            while (!at_end() && peek() != '}') {
                if (peek() == '{') {
                    field();
                } else if (peek() == '\n' || peek() == '\r') {
                    return;  // unterminated: tree-sitter locates the error
                } else {
                    ++i_;
                }
            }
        }
        if (peek() == '}') ++i_;
    }

    // The first token of a logical line, at `start`: its column as CPython's tokenizer counts it (a tab to the next
    // multiple of 8, a form feed back to 0) opens an indentation level or closes those deeper than it.
    void indent(std::size_t start) {
        logical_line_start_ = false;
        int column = 0;
        for (std::size_t k = line_begin_; k < start; ++k) {
            if (text_[k] == '\t') {
                column = (column / 8 + 1) * 8;
            } else if (text_[k] == '\f') {
                column = 0;
            } else {
                ++column;
            }
        }
        while (!indents_.empty() && indents_.back() > column) indents_.pop_back();
        if (column > (indents_.empty() ? 0 : indents_.back())) {
            indents_.push_back(column);
            if (static_cast<int>(indents_.size()) > kPythonMaxIndentLevels)
                fail(PythonScan::Problem::TooManyIndentLevels, start);
        }
    }

    void blank(std::size_t from, std::size_t to) {
        out_.has_comments = true;
        if (!blanked_) return;
        if (blanked_->size() != text_.size()) blanked_->assign(text_);
        for (std::size_t k = from; k < to; ++k) (*blanked_)[k] = ' ';
    }

    std::string_view text_;
    std::uint64_t max_tokens_;
    std::string* blanked_;
    std::size_t i_ = 0;
    int brackets_ = 0;
    int fields_ = 0;  // replacement fields open around i_
    bool line_has_token_ = false;
    bool logical_line_start_ = true;  // no token yet on a line that starts a logical line
    bool joined_ = false;             // a backslash on this line joins it to the next
    std::size_t line_begin_ = 0;
    std::vector<int> indents_;    // the columns of the open indentation levels, innermost last
    int bare_continuations_ = 0;  // lines in a row holding only a backslash
    PythonScan out_;
};

}  // namespace

bool python_string_prefix(std::string_view word, bool& formatted) {
    if (word.empty() || word.size() > 2) return false;
    formatted = false;
    for (char c : word) {
        switch (c | 0x20) {  // ASCII lower case; no other byte maps onto these letters
            case 'f':
            case 't': formatted = true; break;
            case 'r':
            case 'b':
            case 'u': break;
            default: return false;
        }
    }
    return true;
}

PythonScan scan_python(std::string_view text, std::uint64_t max_tokens, std::string* blanked) {
    if (blanked) blanked->clear();
    return Scanner(text, max_tokens, blanked).run();
}

}  // namespace mbl::py
