#pragma once
// Megatron Core facts by commit (schemas/mcore/facts/, written by scripts/mcore_facts.py --store): the config classes
// and compiled checks of every release tag, every commit a Megatron Bridge branch or tag pins and main and dev
// monthly, stored once per distinct piece (scripts/mcore_store.py describes the layout). A commit's two documents are
// rebuilt on demand in the layouts of schemas/mcore/classes/<rev>.json and of a post_init::Program.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace mbl::fact_store {

// One commit of the store.
struct Row {
    std::string commit;  // 40 hex digits
    std::string date;    // its commit date
    std::string where;   // a core_v tag, "main", "dev", "pinned by Megatron Bridge", "named revision"
    std::string base;    // the named revision (schemas/mcore/<base>.json) whose hand-written facts it takes
    std::string name;    // what the linter calls it: the tag, else the first 12 hex digits
    std::size_t recipe = 0;
};

// Every commit of the store, oldest first.
const std::vector<Row>& rows();

// The row whose name is `name` or whose commit starts with `name` (7 hex digits or more, one commit only).
const Row* find(std::string_view name);

// The documents of one commit; std::runtime_error when the store is malformed.
nlohmann::json classes(const Row& row);
nlohmann::json checks(const Row& row);

}  // namespace mbl::fact_store
