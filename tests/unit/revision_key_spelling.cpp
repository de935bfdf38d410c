// Compiled, never run (tests/CMakeLists.txt): as written it builds with the suite; the tests misspelt_revision_key
// and unlisted_rejection build it with MISSPELT / UNLISTED defined and pass only when the compiler refuses it.
#include "core/schema.hpp"
#include "rules/rule.hpp"

namespace mbl {

bool gated_delta_net_known(const Revision& rev) {
#ifdef MISSPELT
    return !rev.enum_values(revision_enum::gated_delta_net_variant).empty();
#else
    return !rev.enum_values(revision_enum::gated_delta_net_variants).empty();
#endif
}

namespace {

// An error rule runs only where a revision lists its code: RC001 is listed, RC999 nowhere.
#ifdef UNLISTED
constexpr RuleInfo kRule{"RC999", "unlisted", Severity::Error, "", ""};
#else
constexpr RuleInfo kRule{"RC001", "listed", Severity::Error, "", ""};
#endif

class Placeholder final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext&) const override {}
};

}  // namespace

#ifdef UNLISTED
MBL_DEFINE_RULE(RC999, Placeholder)
#else
MBL_DEFINE_RULE(RC001, Placeholder)
#endif

}  // namespace mbl
