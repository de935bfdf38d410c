// Compiled, never run (tests/CMakeLists.txt): with the right spelling it builds with the suite; with MISSPELT defined
// the test misspelt_model_field builds it and passes only when the compiler rejects the name.
#include "core/effective_model.hpp"

bool recompute_layers_unset(const mbl::EffectiveModel& m) {
#ifdef MISSPELT
    return m[mbl::FieldName("recompute_num_layer")].is_null();
#else
    return m[mbl::FieldName("recompute_num_layers")].is_null();
#endif
}
