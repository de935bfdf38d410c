#include "config/rule_selection.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fnmatch.h>

#include <algorithm>
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

namespace {

std::vector<const RuleInfo*> documented_codes() {
    std::vector<const RuleInfo*> out;
    for (const auto& r : all_rules()) out.push_back(&r->info());
    for (const auto& i : input_error_docs()) out.push_back(&i);
    return out;
}

bool is_code(std::string_view word) {
    const auto all = documented_codes();
    return std::any_of(all.begin(), all.end(), [&](const RuleInfo* i) { return i->code == word; });
}

}  // namespace

std::vector<std::string> codes_with_prefix(std::string_view prefix) {
    const std::string p = upper(prefix);
    std::vector<std::string> out;
    if (p.empty() || is_code(p)) return out;
    for (const RuleInfo* i : documented_codes())
        if (i->code.starts_with(p)) out.emplace_back(i->code);
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<std::string> rule_pattern_suggestions(std::string_view pattern) {
    std::vector<std::string> out;
    auto add = [&](const std::string& s) {
        if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
    };
    std::string word = upper(pattern);
    // "RC0xx", "RC04x": x's stand for any digit, which is what a prefix says.
    while (word.size() > 2 && word.back() == 'X') word.pop_back();
    const bool placeholder_prefix = word != upper(pattern) && !codes_with_prefix(word).empty();
    if (placeholder_prefix) add(word);
    // "RC4", "RC04": a code short of its zeros.
    const auto digits = word.find_first_of("0123456789");
    if (!placeholder_prefix && digits != std::string::npos && digits > 0 &&
        std::all_of(word.begin() + static_cast<long>(digits), word.end(),
                    [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
        const std::string letters = word.substr(0, digits), number = word.substr(digits);
        for (const RuleInfo* i : documented_codes()) {
            const std::string code(i->code);
            if (code.size() <= word.size() || !code.starts_with(letters)) continue;
            // The typed digits in order, with only zeros between them.
            std::size_t k = 0;
            bool fits = true;
            for (std::size_t j = letters.size(); j < code.size() && fits; ++j) {
                if (k < number.size() && code[j] == number[k]) ++k;
                else fits = code[j] == '0';
            }
            if (fits && k == number.size()) add(code);
        }
    }
    std::vector<std::string> candidates{"ALL"};
    for (const RuleInfo* i : documented_codes()) {
        candidates.emplace_back(i->code);
        candidates.emplace_back(i->name);
        for (std::size_t n = 2; n < i->code.size(); ++n) candidates.emplace_back(i->code.substr(0, n));
    }
    std::sort(candidates.begin(), candidates.end());
    candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
    for (auto& c : close_matches(word == upper(pattern) ? pattern : std::string_view(word), candidates)) add(c);
    if (out.size() > 2) out.resize(2);  // as the other "did you mean" messages
    return out;
}

bool rule_pattern_valid(std::string_view pattern, std::string* why) {
    if (pattern.empty()) {
        if (why) *why = "an empty rule code";
        return false;
    }
    for (const RuleInfo* i : documented_codes())
        if (rule_pattern_matches(pattern, i->code, i->name)) return true;
    if (why) {
        std::vector<std::string> quoted;
        for (const auto& s : rule_pattern_suggestions(pattern)) quoted.push_back(fmt::format("\"{}\"", s));
        const std::string suggestion =
            quoted.empty() ? "" : fmt::format(" (did you mean {}?)", fmt::join(quoted, " or "));
        *why = fmt::format("\"{}\" is not a rule or input-error code, code prefix or name{}; `mbridge-lint rules` "
                           "lists them",
                           pattern, suggestion);
    }
    return false;
}

bool names_input_diagnostics(std::string_view pattern) {
    if (pattern == "ALL") return false;
    for (const auto& i : input_error_docs())
        if (rule_pattern_matches(pattern, i.code, i.name)) return true;
    return false;
}

namespace {

// How precisely a pattern names a code: a whole code or a name beats a longer prefix, which beats a shorter one and
// ALL. Where a select and an ignore pattern of one layer both match, the more precise wins (ignore on a tie).
int specificity(std::string_view pattern, std::string_view code, std::string_view name) {
    if (pattern == "ALL") return 0;
    if (pattern == name || upper(pattern) == code) return 100;
    return static_cast<int>(pattern.size());
}

// One layer of selection (the configuration file, then the command line). `select` present resets what earlier
// layers decided; otherwise the layer only changes the codes its patterns match.
struct SelectionLayer {
    const std::vector<std::string>* select = nullptr;
    std::vector<const std::vector<std::string>*> extend_select;
    std::vector<const std::vector<std::string>*> ignore;

    void apply(const Diagnostic& d, bool& selected) const {
        if (select) selected = false;
        int best = -1;
        bool decision = selected;
        auto weigh = [&](const std::vector<std::string>& patterns, bool on) {
            for (const auto& p : patterns) {
                if (!rule_pattern_matches(p, d.code, d.name)) continue;
                const int s = specificity(p, d.code, d.name);
                if (s > best || (s == best && !on)) {
                    best = s;
                    decision = on;
                }
            }
        };
        if (select) weigh(*select, true);
        for (const auto* p : extend_select) weigh(*p, true);
        for (const auto* p : ignore) weigh(*p, false);
        if (best >= 0) selected = decision;
    }
};

bool pattern_matches_path(const std::string& pattern, const std::string& relative) {
    if (relative.empty()) return false;
    if (fnmatch(pattern.c_str(), relative.c_str(), 0) == 0) return true;
    // A pattern without a directory part matches the file name anywhere, as in .gitignore.
    if (pattern.find('/') == std::string::npos) {
        const std::string base = fs::path(relative).filename().string();
        return fnmatch(pattern.c_str(), base.c_str(), 0) == 0;
    }
    return false;
}

bool any_matches(const std::vector<std::string>& patterns, const std::string& relative) {
    for (const auto& p : patterns)
        if (pattern_matches_path(p, relative)) return true;
    return false;
}

// The severity override that names `d` most precisely, if any.
void apply_severity(Diagnostic& d, const ProjectConfig& config) {
    int best = -1;
    for (const auto& o : config.severity.value) {
        if (!rule_pattern_matches(o.code, d.code, d.name)) continue;
        const int s = specificity(o.code, d.code, d.name);
        if (s > best) {
            best = s;
            d.severity = o.severity;
        }
    }
}

}  // namespace

void apply_rule_selection(std::vector<Diagnostic>& diags, const ProjectConfig& config, const std::string& file,
                          const CommandLineSelection& command_line) {
    std::vector<std::string> file_ignores;
    if (!config.per_file_ignores.value.empty()) {
        const std::string relative = relative_to(file, config.root.value).value_or("");
        for (const auto& p : config.per_file_ignores.value)
            if (pattern_matches_path(p.pattern, relative))
                file_ignores.insert(file_ignores.end(), p.codes.begin(), p.codes.end());
    }
    const SelectionLayer layers[] = {
        {&config.select.value, {&config.extend_select.value}, {&config.ignore.value}},
        {command_line.select ? &*command_line.select : nullptr, {&command_line.extend_select}, {&command_line.ignore}},
    };
    std::vector<Diagnostic> kept;
    for (auto& d : diags) {
        // An input error says the file cannot be used: it is always reported. IN warnings and infos are selected.
        const bool input_error = d.is_input_error() && d.severity == Severity::Error;
        bool selected = true;
        if (!input_error) {
            for (const auto& layer : layers) layer.apply(d, selected);
            // per-file-ignores drop what they name in their files, however precisely it was selected (as in ruff).
            selected &= std::none_of(file_ignores.begin(), file_ignores.end(),
                                     [&](const std::string& p) { return rule_pattern_matches(p, d.code, d.name); });
        }
        if (!selected) continue;
        if (!d.is_input_error()) apply_severity(d, config);
        kept.push_back(std::move(d));
    }
    diags = std::move(kept);
}

bool path_excluded(const std::string& path, const ProjectConfig& config, const CommandLineSelection& command_line) {
    // Outside a pattern's base, only the patterns that name a file or directory anywhere can match; the base itself
    // (a directory holding its configuration) is matched by its name, not as ".".
    auto relative_or_name = [&](const std::string& base) {
        const auto relative = relative_to(path, base);
        if (relative && *relative != ".") return *relative;
        return fs::path(path).lexically_normal().filename().string();
    };
    const std::string in_config = relative_or_name(config.root.value);
    if (!command_line.exclude && any_matches(config.exclude.value, in_config)) return true;
    if (any_matches(config.extend_exclude.value, in_config)) return true;
    if (!command_line.exclude && command_line.extend_exclude.empty()) return false;
    const std::string in_base =
        relative_or_name(command_line.base_dir.empty() ? fs::current_path().string() : command_line.base_dir);
    if (command_line.exclude && any_matches(*command_line.exclude, in_base)) return true;
    return any_matches(command_line.extend_exclude, in_base);
}

}  // namespace mbl
