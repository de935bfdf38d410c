#pragma once
// A stand-in for the Python recipe front end, for tests only: it reads `cfg.model.<field> = <literal>` lines (strings,
// numbers, True/False/None, one-line lists of strings) into a config tree with Origin::Recipe provenance spanning each
// statement, as the real evaluator records it, and `# depends: other.py` lines as dependencies. Everything else
// (comments, fixes, suppressions, dependents) goes through the production code paths of FrontEnd.
#include <algorithm>
#include <filesystem>
#include <regex>

#include "core/line_index.hpp"
#include "core/paths.hpp"
#include "parser/front_end.hpp"
#include "parser/python_edit.hpp"
#include "parser/yaml_loader.hpp"

namespace mbl::test {

class MiniRecipeFrontEnd final : public FrontEnd {
public:
    std::string_view language() const override { return "python"; }
    bool handles(std::string_view path) const override { return path.ends_with(".py"); }

    ParseResult parse(const std::string& name, std::string_view text, bool allow_skip,
                      ParseContext& ctx) const override {
        ParseResult result;
        ParsedConfig config;
        config.root = Value::map();
        Value model = Value::map();
        // What the modules it depends on assign comes first (read through ctx.sources: editor buffers win), then its own.
        for (const auto& dep : dependencies(name, text, ctx))
            if (const std::string* dep_text = ctx.sources.load(dep)) read_assignments(dep, *dep_text, model, config);
        read_assignments(name, text, model, config);
        if (model.entries().empty()) {
            if (allow_skip) result.skipped = true;
            return result;
        }
        config.root.set("model", std::move(model));
        result.configs.push_back(std::move(config));
        return result;
    }

    std::vector<SourceComment> comments(std::string_view text) const override { return python_edit::comments(text); }

    std::vector<TextEdit> field_edit(const FieldEdit& edit, const EditSite& site, std::string_view text,
                                     const LineIndex& lines) const override {
        return python_edit::field_edit(site.entry.file, edit, site, text, lines);
    }

    // `# depends:` lines, followed through the files they name (at any depth, cycles included).
    std::vector<std::string> dependencies(const std::string& path, std::string_view text,
                                          ParseContext& ctx) const override {
        std::vector<std::string> out;
        std::vector<std::pair<std::string, std::string>> todo{{path, std::string(text)}};
        while (!todo.empty()) {
            auto [file, body] = std::move(todo.back());
            todo.pop_back();
            static const std::regex depends(R"(# depends: (\S+))");
            for (std::sregex_iterator it(body.begin(), body.end(), depends), end; it != end; ++it) {
                const std::string dep =
                    normalized_path((std::filesystem::path(file).parent_path() / (*it)[1].str()).string());
                if (dep == normalized_path(path) || std::find(out.begin(), out.end(), dep) != out.end()) continue;
                out.push_back(dep);
                if (const std::string* dep_text = ctx.sources.load(dep)) todo.emplace_back(dep, *dep_text);
            }
        }
        return out;
    }

private:
    static void read_assignments(const std::string& name, std::string_view text, Value& model, ParsedConfig& config) {
        static const std::regex assign(R"(^(\s*)(cfg\.model\.(\w+)\s*=\s*(.*?))\s*(#.*)?$)");
        LineIndex lines(text);
        for (int l = 1; l <= lines.line_count(); ++l) {
            const std::string line(text.substr(lines.line_start(l), lines.line_end(l) - lines.line_start(l)));
            std::smatch m;
            if (!std::regex_match(line, m, assign)) continue;
            const int col = static_cast<int>(m[1].length()) + 1;
            const SourceRange stmt{name, l, col, l, col + static_cast<int>(m[2].length())};
            const Provenance p = Provenance::at(Origin::Recipe, stmt);
            model.set(m[3], literal(m[4], p), stmt);
            if (!config.anchor.valid()) config.anchor = stmt;
        }
    }

    static Value literal(std::string s, const Provenance& p) {
        if (s == "True") return Value::boolean(true, p);
        if (s == "False") return Value::boolean(false, p);
        if (s == "None") return Value::null(p);
        if (s.size() >= 2 && (s.front() == '"' || s.front() == '\''))
            return Value::string(s.substr(1, s.size() - 2), p);
        if (s.size() >= 2 && s.front() == '[') {
            std::vector<Value> items;
            static const std::regex item(R"(["']([^"']*)["'])");
            for (std::sregex_iterator it(s.begin(), s.end(), item), end; it != end; ++it)
                items.push_back(Value::string((*it)[1], p));
            return Value::list(std::move(items), p);
        }
        Value v = parse_yaml_plain_scalar(s);
        v.set_prov(p);
        return v;
    }
};

// Registers the stand-in once, ahead of the built-in Python front end.
inline void use_mini_recipe_front_end() {
    static const bool registered = [] {
        register_front_end(std::make_unique<MiniRecipeFrontEnd>());
        return true;
    }();
    (void)registered;
}

}  // namespace mbl::test
