#include "integrations/lsp/hover.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <vector>

namespace mbl::lsp {
namespace {

std::vector<HoverSection>& sections() {
    static std::vector<HoverSection> list;
    return list;
}

std::string where(const SourceRange& r) {
    return fmt::format("{}:{}", std::filesystem::path(r.file).filename().string(), r.line);
}

std::string origin_text(const Value& v, const EffectiveModel& m) {
    const Provenance& p = v.prov();
    switch (p.origin) {
        case Origin::File:
            return p.range.valid() ? fmt::format("set in the config file at `{}`", where(p.range))
                                   : "set in the config file";
        case Origin::Recipe:
            return p.range.valid() ? fmt::format("set by the recipe at `{}`", where(p.range)) : "set by the recipe";
        case Origin::Override: return "set by a command-line override";
        case Origin::Default:
            return p.detail.empty() ? fmt::format("the default of Megatron Core {}", m.revision ? m.revision->name : "")
                                    : p.detail;
        case Origin::Derived: return p.detail.empty() ? "derived from other settings" : p.detail;
    }
    return "";
}

}  // namespace

void add_hover_section(HoverSection section) { sections().push_back(std::move(section)); }

std::string hover_markdown(const EffectiveModel& m, FieldName name, const Value* written) {
    const Value& effective = m[name];
    std::string shown = effective.display();
    // What Megatron Core's __post_init__ made of the value (the effective model holds the rewritten value, its
    // provenance names the line that rewrote it); other derivations say so in the origin itself.
    const Provenance& p = effective.prov();
    const std::string rewrite = p.origin == Origin::Default || p.origin == Origin::Derived ? std::string() : p.detail;

    std::string md = fmt::format("**{}** = `{}`", name, shown);
    if (m.revision) md += fmt::format(" — effective value at Megatron Core {}", m.revision->name);
    md += "\n\n" + origin_text(effective, m);
    if (written && written->display() != shown) {
        md += fmt::format("\n\nwritten here as `{}`", written->display());
        if (effective.prov().origin == Origin::Derived || effective.prov().origin == Origin::Override)
            md += ", overridden";
    }
    if (!rewrite.empty()) md += "\n\n" + rewrite;
    for (const auto& s : sections())
        if (auto extra = s(m, name)) md += "\n\n---\n\n" + *extra;
    return md;
}

}  // namespace mbl::lsp
