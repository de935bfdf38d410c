// Where the rule documentation (docs/rules.md) is, for the link each diagnostic carries.
#include <fmt/format.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>

#include "core/paths.hpp"
#include "report/report.hpp"
#include "rules/registry.hpp"

// Set by CMakeLists.txt: MBRIDGE_LINT_DOCS_URL (a packager's web copy, empty by default), the page's install path
// relative to the prefix (cmake/Packaging.cmake installs it there) and the source tree's copy.
#ifndef MBRIDGE_LINT_DOCS_URL
#define MBRIDGE_LINT_DOCS_URL ""
#endif
#ifndef MBRIDGE_LINT_INSTALLED_RULES_PAGE
#define MBRIDGE_LINT_INSTALLED_RULES_PAGE ""
#endif
#ifndef MBRIDGE_LINT_SOURCE_RULES_PAGE
#define MBRIDGE_LINT_SOURCE_RULES_PAGE ""
#endif

namespace mbl {

namespace fs = std::filesystem;

namespace {

std::string file_url(const fs::path& page) { return "file://" + uri_encode_path(page.lexically_normal().string()); }

std::string find_rules_page() {
    if (const char* url = std::getenv("MBRIDGE_LINT_DOCS_URL"); url && *url) return url;  // a mirror; stable docs
    if (*MBRIDGE_LINT_DOCS_URL) return MBRIDGE_LINT_DOCS_URL;
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec && *MBRIDGE_LINT_INSTALLED_RULES_PAGE) {
        const fs::path installed = exe.parent_path().parent_path() / MBRIDGE_LINT_INSTALLED_RULES_PAGE;
        if (fs::is_regular_file(installed, ec)) return file_url(installed);
    }
    if (*MBRIDGE_LINT_SOURCE_RULES_PAGE && fs::is_regular_file(MBRIDGE_LINT_SOURCE_RULES_PAGE, ec))
        return file_url(MBRIDGE_LINT_SOURCE_RULES_PAGE);
    return "";
}

// The code's entry in docs/rules.md: its heading "RC004-full-recompute-without-method" as an anchor.
const RuleInfo* documented(std::string_view code) {
    if (const Rule* rule = find_rule(code)) return &rule->info();
    for (const auto& i : input_error_docs())
        if (i.code == code) return &i;
    return nullptr;
}

}  // namespace

const std::string& rules_page_url() {
    static const std::string url = find_rules_page();
    return url;
}

std::string rule_doc_url(std::string_view code) {
    const RuleInfo* info = documented(code);
    if (!info || rules_page_url().empty()) return "";
    std::string anchor = fmt::format("{}-{}", info->code, info->name);
    for (auto& c : anchor) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return fmt::format("{}#{}", rules_page_url(), anchor);
}

}  // namespace mbl
