// The Python recipe front end, as far as it goes without the recipe evaluator: files are recognised by extension,
// comments (suppressions) are read, and FieldEdits become text edits from the provenance the evaluator records.
// The evaluator itself (parse()) comes with the recipes work under parser/python/; until then an explicitly named
// recipe file is reported as not readable by this build, and recipe files met in a walk are skipped.
#include <fmt/format.h>

#include "parser/front_end.hpp"
#include "parser/input_errors.hpp"
#include "parser/python_edit.hpp"

namespace mbl {
namespace {

class PythonFrontEnd final : public FrontEnd {
public:
    std::string_view language() const override { return "python"; }
    bool handles(std::string_view path) const override { return path.ends_with(".py"); }
    ParseResult parse(const std::string& name, std::string_view, bool allow_skip, ParseContext&) const override {
        ParseResult result;
        if (allow_skip) {
            result.skipped = true;
            return result;
        }
        result.errors.push_back(input_error(
            InputError::UnknownTarget, SourceRange::whole_file(name),
            fmt::format("{}: Python recipes need the recipe front end, which this build of mbridge-lint does not "
                        "include; lint the recipe's run_config.yaml dump instead",
                        name)));
        return result;
    }
    std::vector<SourceComment> comments(std::string_view text) const override { return python_edit::comments(text); }
    std::vector<TextEdit> field_edit(const FieldEdit& edit, const EditSite& site, std::string_view text) const override {
        return python_edit::field_edit(site.entry.file, edit, site, text);
    }
};

}  // namespace

std::unique_ptr<FrontEnd> make_python_front_end() { return std::make_unique<PythonFrontEnd>(); }

}  // namespace mbl
