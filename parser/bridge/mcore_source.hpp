#pragma once
// Megatron Core's config classes read from a tree on disk (a checked-out 3rdparty/Megatron-LM, a site-packages, any
// folder holding megatron/core) with the linter's own Python front end: the same facts scripts/mcore_facts.py
// bundles for the known revisions (core/config_classes.hpp), for the code the job will import. Nothing is run.
#include <filesystem>
#include <optional>
#include <string>

#include "core/config_classes.hpp"

namespace mbl::py {

// The classes `like` lists (their names and files), read from `root` (the folder holding megatron/); each class
// keeps the fields, bases, types and defaults the tree states, and the recompute labels and default modules where
// TransformerConfig.__post_init__ states them. nullopt, with `why` set, when the tree has no TransformerConfig.
std::optional<ClassFacts> read_mcore_classes(const std::filesystem::path& root, const ClassFacts& like,
                                             std::string& why);

}  // namespace mbl::py
