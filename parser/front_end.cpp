#include "parser/front_end.hpp"

#include <cctype>

namespace mbl {

std::unique_ptr<FrontEnd> make_yaml_front_end();
std::unique_ptr<FrontEnd> make_python_front_end();

static std::vector<std::unique_ptr<FrontEnd>>& registry() {
    static std::vector<std::unique_ptr<FrontEnd>> list = [] {
        std::vector<std::unique_ptr<FrontEnd>> v;
        v.push_back(make_yaml_front_end());
        v.push_back(make_python_front_end());
        return v;
    }();
    return list;
}

const std::vector<std::unique_ptr<FrontEnd>>& front_ends() { return registry(); }

void register_front_end(std::unique_ptr<FrontEnd> front_end) {
    registry().insert(registry().begin(), std::move(front_end));
}

std::pair<std::size_t, std::size_t> list_element_removal(std::string_view t, std::size_t b, std::size_t e) {
    auto blank = [](char c) { return c == ' ' || c == '\t'; };
    std::size_t j = e;
    while (j < t.size() && blank(t[j])) ++j;
    if (j < t.size() && t[j] == ',') {
        e = j + 1;
        while (e < t.size() && blank(t[e])) ++e;
        return {b, e};
    }
    std::size_t k = b;
    while (k > 0 && std::isspace(static_cast<unsigned char>(t[k - 1]))) --k;
    if (k > 0 && t[k - 1] == ',') b = k - 1;
    return {b, e};
}

SourceComment comment_at(std::string_view text, const LineIndex& lines, std::size_t hash, std::size_t end) {
    SourceComment c;
    c.line = lines.line_of(hash);
    c.column = lines.column_of(hash);
    c.text = std::string(text.substr(hash + 1, end - hash - 1));
    const std::size_t line_start = lines.line_start(c.line);
    c.own_line = text.substr(line_start, hash - line_start).find_first_not_of(" \t") == std::string_view::npos;
    return c;
}

const FrontEnd* front_end_for(std::string_view path) {
    for (const auto& f : registry())
        if (f->handles(path)) return f.get();
    return nullptr;
}

const FrontEnd& front_end_or_yaml(std::string_view path) {
    if (const FrontEnd* fe = front_end_for(path)) return *fe;
    return *front_end_for("any.yaml");
}

}  // namespace mbl
