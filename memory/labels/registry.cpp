#include "memory/labels/registry.hpp"

#include <algorithm>

namespace mbl::memory::labels {

#define MBL_LABEL(name) extern const LabelModel k_##name;
#define MBL_UNMODELED_LABEL(name, why)
#include "memory/labels/labels.def"
#undef MBL_LABEL
#undef MBL_UNMODELED_LABEL

void Replay::add(const std::string& module) {
    if (!has(modules, module)) modules.push_back(module);
}

const std::vector<const LabelModel*>& modeled() {
    static const std::vector<const LabelModel*> all{
#define MBL_LABEL(name) &k_##name,
#define MBL_UNMODELED_LABEL(name, why)
#include "memory/labels/labels.def"
#undef MBL_LABEL
#undef MBL_UNMODELED_LABEL
    };
    return all;
}

const LabelModel* find(std::string_view name) {
    const auto& all = modeled();
    const auto it = std::find_if(all.begin(), all.end(), [&](const LabelModel* l) { return l->name == name; });
    return it == all.end() ? nullptr : *it;
}

const std::vector<UnmodeledLabel>& unmodeled() {
    static const std::vector<UnmodeledLabel> all{
#define MBL_LABEL(name)
#define MBL_UNMODELED_LABEL(name, why) {#name, why},
#include "memory/labels/labels.def"
#undef MBL_LABEL
#undef MBL_UNMODELED_LABEL
    };
    return all;
}

}  // namespace mbl::memory::labels
