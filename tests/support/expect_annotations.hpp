// The `# expect: RC004, RC101` annotation shared by the YAML and Python fixture tests (clang-tidy's CHECK-MESSAGES,
// in comment form): the codes of the diagnostics that must start on the annotated line.
#pragma once
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace test_support {

// Codes annotated on one source line; empty when the line has no `# expect:` comment.
inline std::vector<std::string> expected_codes(const std::string& line) {
    static const std::regex expect_re(R"(#\s*expect:\s*([A-Z0-9, ]+?)\s*$)");
    std::vector<std::string> codes;
    std::smatch m;
    if (!std::regex_search(line, m, expect_re)) return codes;
    std::stringstream list(m[1].str());
    std::string code;
    while (std::getline(list, code, ',')) {
        code.erase(0, code.find_first_not_of(' '));
        code.erase(code.find_last_not_of(' ') + 1);
        if (!code.empty()) codes.push_back(code);
    }
    return codes;
}

}  // namespace test_support
