// Compiled, never run (tests/CMakeLists.txt): as written it builds with the suite; the test misspelt_revision_key
// builds it with MISSPELT defined and passes only when the compiler refuses it.
#include "core/schema.hpp"

namespace mbl {

bool gated_delta_net_known(const Revision& rev) {
#ifdef MISSPELT
    return !rev.enum_values(revision_enum::gated_delta_net_variant).empty();
#else
    return !rev.enum_values(revision_enum::gated_delta_net_variants).empty();
#endif
}

}  // namespace mbl
