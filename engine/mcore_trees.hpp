#pragma once
// Revisions for a Megatron Core that is not one of the bundled snapshots: a tree on disk (--mcore-path, a checked-out
// 3rdparty/Megatron-LM), whose config classes are read with the Python front end and replace the bundled ones, or a
// commit no revision records, whose nearest known revision stands in for it without proving what it lacks. Each is
// made once per process and lives until it ends, like the bundled revisions.
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "core/revision_detection.hpp"
#include "core/schema.hpp"

namespace mbl {

// The folder holding megatron/core that DIR names: DIR itself, or DIR when it is that folder's megatron/core.
std::optional<std::filesystem::path> mcore_root(const std::filesystem::path& dir);

// `base`'s checks over the config classes read from `tree` (a folder holding megatron/core); nullptr with `error`
// set when the tree has no readable TransformerConfig.
const Revision* revision_for_tree(const Revision& base, const std::filesystem::path& tree, std::string& error);

// `base` standing in for a Megatron Core it was not generated from (`note` says which and why).
const Revision* approximate_revision(const Revision& base, const std::string& note, const Revision* confirm = nullptr);

// A detected choice with its tree read, or marked approximate: the revision the files are linted for. An unreadable
// tree keeps the bundled facts and says so in the reason.
RevisionChoice with_facts(RevisionChoice choice);

// --mcore-path DIR: the revision `named` (--mcore or the configuration file's mcore, nullptr when neither) over the
// tree's classes, else the known revision nearest to the tree's version, else the default.
RevisionChoice choice_for_mcore_path(const std::string& dir, const Revision* named, std::string named_why);

// Megatron Bridge's comm-overlap start-up checks as the Bridge checkout holding `file` states them (a parent with
// src/megatron/bridge/training/comm_overlap.py): compiled from its source once per checkout, by the route that made
// the bundled ones (schemas/bridge/checks.json). Null outside a checkout (the bundled checks then stand); a program
// without steps where the checkout's start-up cannot be followed (its checks are then unknown, and none run).
std::shared_ptr<const post_init::Program> bridge_checks_for_file(const std::string& file);

}  // namespace mbl
