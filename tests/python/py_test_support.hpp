#pragma once
// Helpers for tests of the Python front end: throw-away source trees and a one-call evaluation of a recipe.
#include <unistd.h>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "core/schema.hpp"
#include "engine/lint_session.hpp"
#include "parser/front_end.hpp"

namespace pytest {

namespace fs = std::filesystem;

using Files = std::map<std::string, std::string>;

// A directory of Python files, removed at the end of the test.
class TempTree {
public:
    explicit TempTree(const Files& files) {
        static std::atomic<int> counter{0};
        dir_ = fs::temp_directory_path() /
               ("mbridge-lint-py-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
        fs::remove_all(dir_);
        for (const auto& [name, text] : files) write(name, text);
    }
    ~TempTree() {
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }
    void write(const std::string& name, const std::string& text) const {
        fs::create_directories((dir_ / name).parent_path());
        std::ofstream(dir_ / name) << text;
    }
    std::string path(const std::string& name = "") const { return (dir_ / name).string(); }

private:
    fs::path dir_;
};

// How a test runs the Python front end: the tree is the source root; Hugging Face configs only from
// `hf_configs` (files, ORG/NAME=PATH, or hub-cache-shaped directories).
struct RecipeOptions {
    std::vector<std::string> hf_configs;
    int jobs = 0;
    bool show_unknowns = false;
};

struct EvaluatedRecipe {
    mbl::Value root;
    mbl::SourceRange def;
    std::vector<mbl::Diagnostic> diagnostics;  // the front end's findings
};

// Evaluates every recipe of `file` in `tree` and returns them by name.
struct Evaluated {
    std::map<std::string, EvaluatedRecipe> recipes;
    std::vector<mbl::Diagnostic> errors;
    const mbl::Value* get(const std::string& recipe, const std::string& dotted) const {
        auto it = recipes.find(recipe);
        if (it == recipes.end()) return nullptr;
        const mbl::Value* v = &it->second.root;
        size_t start = 0;
        while (v && start <= dotted.size()) {
            size_t dot = dotted.find('.', start);
            std::string key = dotted.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
            v = v->is_map() ? v->find(key) : nullptr;
            if (dot == std::string::npos) break;
            start = dot + 1;
        }
        return v;
    }
};

inline Evaluated evaluate(const TempTree& tree, const std::string& file, RecipeOptions options = {}) {
    mbl::SourceManager sources;
    Evaluated out;
    std::string error;
    const std::string* text = sources.load(tree.path(file), &error);
    if (!text) {
        out.errors.push_back(mbl::Diagnostic{});
        return out;
    }
    mbl::ParseContext ctx{.sources = sources, .hf_config_paths = options.hf_configs, .root = tree.path()};
    ctx.revision = mbl::Schema::instance().revision("0.20.dev");
    ctx.jobs = options.jobs;
    mbl::ParseResult parsed = mbl::front_end_for(".py")->parse(tree.path(file), *text, false, ctx);
    out.errors = std::move(parsed.errors);
    for (auto& c : parsed.configs)
        out.recipes.emplace(c.label, EvaluatedRecipe{std::move(c.root), c.anchor, std::move(c.findings)});
    return out;
}

// Lints every recipe of `file` as `check` does.
struct RunResult {
    std::vector<mbl::Diagnostic> diagnostics;
    int recipes = 0;
    int resolved = 0;
};

inline RunResult lint(const TempTree& tree, const std::string& file, RecipeOptions options = {}) {
    mbl::SessionOptions session_options;
    session_options.mcore = "0.20.dev";
    session_options.root = tree.path();
    session_options.hf_configs = options.hf_configs;
    session_options.jobs = options.jobs;
    session_options.show_unknowns = options.show_unknowns;
    mbl::SourceManager sources;
    mbl::LintSession session(session_options, sources);
    mbl::FileResult r = session.lint(tree.path(file));
    return RunResult{std::move(r.diagnostics), r.recipes, r.recipes - static_cast<int>(r.unresolved.size())};
}

}  // namespace pytest
