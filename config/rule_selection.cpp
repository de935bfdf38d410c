#include "config/rule_selection.hpp"

#include <fmt/format.h>
#include <fnmatch.h>

#include <cctype>
#include <filesystem>

#include "core/did_you_mean.hpp"
#include "core/paths.hpp"
#include "rules/registry.hpp"

namespace mbl {

namespace fs = std::filesystem;

static std::string upper(std::string_view s) {
    std::string out(s);
    for (auto& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return out;
}

bool rule_pattern_matches(std::string_view pattern, std::string_view code, std::string_view name) {
    if (pattern == "ALL") return true;
    if (pattern == name) return true;
    return !pattern.empty() && code.starts_with(upper(pattern));
}

bool rule_pattern_valid(std::string_view pattern, std::string* why) {
    if (pattern.empty()) {
        if (why) *why = "an empty rule code";
        return false;
    }
    if (upper(pattern).starts_with("IN")) {
        if (why)
            *why = fmt::format("\"{}\": input errors (IN0xx) say the file cannot be used and cannot be selected, "
                               "ignored or re-ranked",
                               pattern);
        return false;
    }
    std::vector<std::string> candidates{"ALL"};
    for (const auto& r : all_rules()) {
        const RuleInfo& i = r->info();
        if (rule_pattern_matches(pattern, i.code, i.name)) return true;
        candidates.emplace_back(i.code);
        candidates.emplace_back(i.name);
    }
    if (why)
        *why = fmt::format("\"{}\" is not a rule code, code prefix or rule name{}; `mbridge-lint rules` lists them",
                           pattern, did_you_mean_suffix(pattern, candidates));
    return false;
}

static bool pattern_matches_file(const std::string& pattern, const std::string& relative) {
    if (relative.empty()) return false;
    if (fnmatch(pattern.c_str(), relative.c_str(), 0) == 0) return true;
    // A pattern without a directory part matches the file name anywhere, as in .gitignore.
    if (pattern.find('/') == std::string::npos) {
        const std::string base = fs::path(relative).filename().string();
        return fnmatch(pattern.c_str(), base.c_str(), 0) == 0;
    }
    return false;
}

void apply_rule_selection(std::vector<Diagnostic>& diags, const ProjectConfig& config, const std::string& file) {
    std::vector<std::string> ignored = config.ignore.value;
    if (!config.per_file_ignores.value.empty()) {
        const std::string relative = relative_to(file, config.root.value).value_or("");
        for (const auto& p : config.per_file_ignores.value)
            if (pattern_matches_file(p.pattern, relative))
                ignored.insert(ignored.end(), p.codes.begin(), p.codes.end());
    }
    auto any = [](const std::vector<std::string>& patterns, const Diagnostic& d) {
        for (const auto& p : patterns)
            if (rule_pattern_matches(p, d.code, d.name)) return true;
        return false;
    };
    std::vector<Diagnostic> kept;
    for (auto& d : diags) {
        if (!d.is_input_error()) {
            if (!any(config.select.value, d) || any(ignored, d)) continue;
            // The most specific override wins: a full code or name over a prefix, a longer prefix over a shorter.
            size_t best = 0;
            for (const auto& o : config.severity.value) {
                const size_t specificity = o.code == d.name ? 100 : o.code.size();
                if (rule_pattern_matches(o.code, d.code, d.name) && specificity > best) {
                    best = specificity;
                    d.severity = o.severity;
                }
            }
        }
        kept.push_back(std::move(d));
    }
    diags = std::move(kept);
}

}  // namespace mbl
