#pragma once
// Helpers for tests of the Python front end: throw-away source trees and a one-call evaluation of a recipe.
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <unistd.h>

#include "core/schema.hpp"
#include "engine/linter.hpp"
#include "engine/recipe_runner.hpp"
#include "parser/python/recipes.hpp"

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

// Evaluates every recipe of `file` in `tree` (the tree is the source root) and returns them by name.
struct Evaluated {
    std::map<std::string, mbl::EvaluatedRecipe> recipes;
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

inline Evaluated evaluate(const TempTree& tree, const std::string& file, mbl::RecipeOptions options = {}) {
    const mbl::Revision* rev = mbl::Schema::instance().revision("0.20.dev");
    options.root = tree.path();
    if (options.hf_cache_dirs.empty()) options.hf_cache_dirs = {tree.path("no-hf-cache")};
    mbl::RecipeSession session(*rev, options);
    Evaluated out;
    int files = 0;
    auto found = session.collect({mbl::RecipeTarget{tree.path(file), {}}}, out.errors, files);
    for (const auto* r : found) {
        auto e = session.evaluate(*r);
        if (e.is_recipe) out.recipes.emplace(e.name, std::move(e));
    }
    for (auto& d : session.module_diagnostics()) out.errors.push_back(std::move(d));
    return out;
}

// Lints every recipe of `file` and returns the run result.
inline mbl::RecipeRunResult lint(const TempTree& tree, const std::string& file, mbl::RecipeOptions options = {},
                                 std::vector<mbl::Diagnostic>* errors = nullptr) {
    const mbl::Revision* rev = mbl::Schema::instance().revision("0.20.dev");
    options.root = tree.path();
    if (options.hf_cache_dirs.empty()) options.hf_cache_dirs = {tree.path("no-hf-cache")};
    mbl::RecipeSession session(*rev, options);
    std::vector<mbl::Diagnostic> local;
    int files = 0;
    auto found = session.collect({mbl::RecipeTarget{tree.path(file), {}}}, errors ? *errors : local, files);
    mbl::SourceManager sources;
    mbl::Linter linter(mbl::LintOptions(rev), sources);
    return session.lint(found, linter);
}

}  // namespace pytest
