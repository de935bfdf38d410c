#pragma once
// Which Megatron Core revision a file is linted for when neither --mcore nor the configuration file says: a file
// inside a Megatron Bridge checkout gets the revision that checkout pins. Everything is read from files (the
// submodule's HEAD, the superproject's git index, .main.commit, uv.lock); git is never run, and each checkout is read once.
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/schema.hpp"

namespace mbl {

// The revision a file is linted for, and why.
struct RevisionChoice {
    enum class Source { CommandLine, ConfigFile, Detected, Default };
    Source source = Source::Default;
    const Revision* revision = nullptr;
    std::string reason;    // a sentence: why this revision
    std::string checkout;  // the Bridge checkout it was detected from ("" when none)
    std::string commit;    // the Megatron-LM commit the checkout pins ("" when none)
    // A Megatron Core tree to read the config classes from (the checked-out 3rdparty/Megatron-LM, --mcore-path):
    // the folder holding megatron/core; "" when there is none.
    std::string mcore_tree;
    // `revision` stands in for a commit it was not generated from (the nearest known one): its facts prove nothing
    // absent there. Only meaningful without an mcore_tree.
    bool approximate = false;
    const Revision* confirm = nullptr;  // for approximate facts: the revision on the commit's other side (or none)
};
const char* revision_source_name(
    RevisionChoice::Source s);  // "command line", "configuration file", "detected", "default"
// For a detected choice, the line the check summary prints once: "Megatron Core 0.20.dev for files in /work/bridge:
// its 3rdparty/Megatron-LM gitlink pins 2a75ac12c54b; ...; pass --mcore to choose another revision".
std::string detection_note(const RevisionChoice& choice);
// "that is a commit of 2026-06-13 on main, which mbridge-lint has no facts for; those of 0.18, the nearest revision,
// stand in, and a check 0.19's source does not state too is only a warning".
std::string commit_place_sentence(const CommitPlace& place);

// Where a Bridge checkout says which Megatron-LM it runs, in the order they are asked.
struct MegatronPin {
    // LockedVersion: uv.lock locks megatron-core at a released version (a wheel from a package index), which is no
    // commit: `commit` is empty and `version` holds it ("0.15.0rc6").
    enum class Kind { Checkout, Gitlink, MainCommitFile, LockedVersion };
    Kind kind;
    std::string commit;  // 40 hex digits as read (lower case)
    std::string version = {};
};

// The megatron-core version a uv.lock locks from a package index ("0.15.0rc6"); nullopt when it locks none, or
// locks it from a path or git (3rdparty/Megatron-LM, which the other pins name). Read as text (exposed for tests).
std::optional<std::string> uv_lock_mcore_version(std::string_view lock);

class RevisionDetector {
public:
    // The revision the Bridge checkout holding `path` pins; nullopt when `path` is not inside a Bridge checkout
    // (a directory holding src/megatron/bridge and 3rdparty/Megatron-LM, .main.commit or a uv.lock locking
    // megatron-core from a package index).
    std::optional<RevisionChoice> detect(const std::string& path);

    // The pins of one checkout root, in the order detection uses them (exposed for tests).
    static std::vector<MegatronPin> read_pins(const std::filesystem::path& root);
    // The choice those pins lead to: the first pin decides; a commit no revision records falls back to the next
    // pin that one does record, else to the default revision, and the reason says so.
    static RevisionChoice choose(const std::filesystem::path& root, const std::vector<MegatronPin>& pins);

private:
    std::optional<RevisionChoice> detect_uncached(const std::string& path);
    std::optional<std::filesystem::path> checkout_root(const std::filesystem::path& dir);

    std::mutex mutex_;
    // By the path's string: a run asks for every file, and comparing std::filesystem::path keys component by
    // component cost more than the rest of the question.
    std::unordered_map<std::string, std::optional<std::filesystem::path>> root_of_dir_;
    std::unordered_map<std::string, RevisionChoice> by_root_;
    std::unordered_map<std::string, std::optional<RevisionChoice>> by_path_;  // detect's answers, as asked
};

// The version a Megatron Core tree reports (`root`/megatron/core/package_info.py: "0.20.0", "0.17.0rc0"), read as
// text; nullopt when there is none.
std::optional<std::string> mcore_package_version(const std::filesystem::path& root);
// Whether `root` holds Megatron Core's config classes (megatron/core/transformer/transformer_config.py).
bool is_mcore_tree(const std::filesystem::path& root);

// Git's on-disk data, read without git (exposed for tests). All return nullopt on anything unexpected.
// The git directory of a work tree: `dir/.git` itself, or where a `.git` file ("gitdir: ...") points.
std::optional<std::filesystem::path> git_dir_of(const std::filesystem::path& work_tree);
// The commit HEAD names: a detached HEAD's hash, or the branch it points to (loose or packed ref).
std::optional<std::string> head_commit(const std::filesystem::path& git_dir);
// The commit recorded for the gitlink (submodule entry) at `path` in an index file (versions 2 to 4).
std::optional<std::string> index_gitlink(const std::string& index_bytes, std::string_view path);
// A tag (refs/tags/..., loose or packed, annotated ones by the commit they point to) naming `commit`; nullopt if none.
std::optional<std::string> tag_of_commit(const std::filesystem::path& git_dir, const std::string& commit);

}  // namespace mbl
