#include "engine/mcore_trees.hpp"

#include <fmt/format.h>

#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "core/paths.hpp"
#include "core/post_init.hpp"
#include "parser/bridge/mcore_source.hpp"
#include "parser/bridge/mcore_tree.hpp"

namespace mbl {

namespace fs = std::filesystem;

namespace {

// The revisions made at run time, by key; never freed, as the bundled ones are not.
struct Made {
    std::unique_ptr<Revision> revision;
    std::string error;
};

std::mutex& made_mutex() {
    static std::mutex m;
    return m;
}

std::map<std::string, Made>& made() {
    static std::map<std::string, Made> m;
    return m;
}

std::string canonical_string(const fs::path& p) {
    std::error_code ec;
    fs::path c = resolved_path(p, ec);
    return (ec ? p : c).lexically_normal().string();
}

}  // namespace

std::optional<fs::path> mcore_root(const fs::path& dir) {
    if (is_mcore_tree(dir)) return dir;
    std::error_code ec;
    const fs::path normal = fs::absolute(dir, ec).lexically_normal();
    fs::path trimmed = normal.filename().empty() ? normal.parent_path() : normal;  // "…/megatron/core/"
    if (trimmed.filename() == "core" && trimmed.parent_path().filename() == "megatron" &&
        is_mcore_tree(trimmed.parent_path().parent_path()))
        return trimmed.parent_path().parent_path();
    return std::nullopt;
}

const Revision* revision_for_tree(const Revision& base, const fs::path& tree, std::string& error) {
    const std::string root = canonical_string(tree);
    const std::string key = fmt::format("tree\n{}\n{}", base.name, root);
    std::lock_guard<std::mutex> lock(made_mutex());
    auto it = made().find(key);
    if (it == made().end()) {
        Made m;
        std::string why;
        if (auto facts = py::read_mcore_classes(root, *base.classes, why)) {
            facts->package_version = mcore_package_version(root).value_or("");
            if (!facts->package_version.empty())
                facts->origin += fmt::format(" (megatron-core {})", facts->package_version);
            m.revision = std::make_unique<Revision>(base);
            apply_class_facts(*m.revision, std::make_shared<const ClassFacts>(std::move(*facts)));
            m.revision->approximate = false;
            m.revision->facts_note = fmt::format("the checks are Megatron Core {}'s", base.name);
        } else {
            m.error = why;
        }
        it = made().emplace(key, std::move(m)).first;
    }
    error = it->second.error;
    return it->second.revision.get();
}

const Revision* approximate_revision(const Revision& base, const std::string& note, const Revision* confirm) {
    const std::string key =
        fmt::format("approximate\n{}\n{}\n{}", base.name, note, confirm ? confirm->name : std::string());
    std::lock_guard<std::mutex> lock(made_mutex());
    auto it = made().find(key);
    if (it == made().end()) {
        Made m;
        m.revision = std::make_unique<Revision>(base);
        m.revision->approximate = true;
        m.revision->confirm = confirm;
        m.revision->facts_note = note;
        it = made().emplace(key, std::move(m)).first;
    }
    return it->second.revision.get();
}

RevisionChoice with_facts(RevisionChoice choice) {
    if (!choice.revision) return choice;
    if (!choice.mcore_tree.empty()) {
        std::string error;
        if (const Revision* r = revision_for_tree(*choice.revision, choice.mcore_tree, error)) {
            choice.revision = r;
            return choice;
        }
        choice.reason +=
            fmt::format(" (not readable: {}; the bundled ones of {} are used)", error, choice.revision->name);
        choice.mcore_tree.clear();
    }
    if (choice.approximate)
        choice.revision = approximate_revision(
            *choice.revision,
            fmt::format("the bundled facts of Megatron Core {} stand in for commit {}, which "
                        "mbridge-lint has not read",
                        choice.revision->name, choice.commit.empty() ? "?" : choice.commit.substr(0, 12)),
            choice.confirm);
    return choice;
}

// A checkout without its Megatron Core sources: the fields of a section class's Megatron Core bases are taken from
// the bundled program's description of the same class (read with the Megatron Core Bridge 067f987 pins), named so in
// `bases_from`. The fields the class declares in the checkout stay its own.
static void complete_section_fields(post_init::Program& live, const post_init::Program& bundled) {
    for (auto& [section, fields] : live.section_fields) {
        auto known = bundled.section_fields.find(section);
        if (fields.complete || known == bundled.section_fields.end() || !known->second.complete ||
            known->second.cls != fields.cls)
            continue;
        post_init::SectionFields merged = known->second;
        for (std::size_t i = 0; i < fields.names.size(); ++i) {
            auto same = std::find(merged.names.begin(), merged.names.end(), fields.names[i]);
            if (same != merged.names.end()) {
                merged.defaults[static_cast<std::size_t>(same - merged.names.begin())] = fields.defaults[i];
            } else {
                merged.names.push_back(fields.names[i]);
                merged.defaults.push_back(fields.defaults[i]);
            }
        }
        merged.bases_from =
            fmt::format("Megatron-LM as Megatron Bridge {} pins it (bundled)", bundled.commit.substr(0, 12));
        fields = std::move(merged);
    }
}

std::shared_ptr<const post_init::Program> bridge_checks_for_file(const std::string& file) {
    if (file.empty() || file[0] == '<') return nullptr;
    std::error_code ec;
    const fs::path dir = fs::absolute(file, ec).parent_path();
    static std::mutex mutex;
    static std::map<std::string, std::shared_ptr<const post_init::Program>> by_dir, by_checkout;
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = by_dir.find(dir.string()); it != by_dir.end()) return it->second;
    std::shared_ptr<const post_init::Program> found;
    fs::path at = dir;
    for (int depth = 0; !at.empty() && depth < 64; ++depth, at = at.parent_path()) {
        if (fs::is_regular_file(at / "src" / "megatron" / "bridge" / "training" / "comm_overlap.py", ec)) {
            auto [it, added] = by_checkout.try_emplace(at.string());
            if (added) {
                py::TreeReader tree(at / "src");
                // The Megatron Core the checkout pins, where its submodule is checked out: the classes Bridge's
                // configs derive from are read there.
                std::optional<py::TreeReader> mcore;
                if (fs::is_directory(at / "3rdparty" / "Megatron-LM" / "megatron" / "core", ec))
                    mcore.emplace(at / "3rdparty" / "Megatron-LM");
                std::string why;
                auto compiled = py::compile_bridge_startup(tree, "", why, mcore ? &*mcore : nullptr);
                // A start-up the compiler cannot follow: this checkout's Bridge checks what the linter cannot say,
                // and another Bridge's checks are no promise about it. None run.
                auto program =
                    compiled ? std::make_shared<post_init::Program>(*compiled) : std::make_shared<post_init::Program>();
                complete_section_fields(*program, Schema::instance().bridge_checks());
                it->second = std::move(program);
            }
            found = it->second;
            break;
        }
        if (at == at.parent_path()) break;
    }
    by_dir.emplace(dir.string(), found);
    return found;
}

RevisionChoice choice_for_mcore_path(const std::string& dir, const Revision* named, std::string named_why) {
    const Schema& schema = Schema::instance();
    RevisionChoice choice;
    choice.source = RevisionChoice::Source::CommandLine;
    const auto root = mcore_root(dir);
    if (!root) {
        choice.reason = fmt::format("--mcore-path {}: there is no megatron/core/transformer/transformer_config.py "
                                    "under it; name the folder that holds megatron/ (a Megatron-LM checkout, a "
                                    "site-packages)",
                                    dir);
        return choice;
    }
    const Revision* base = named;
    std::string why = std::move(named_why);
    if (!base) {
        if (auto version = mcore_package_version(*root)) {
            std::string nearest;
            base = schema.nearest_revision(*version, nearest);
            if (base) why = fmt::format("its megatron/core/package_info.py says {}: {}", *version, nearest);
        }
        if (!base) {
            base = schema.revision(schema.default_revision());
            why = fmt::format("its version names no known revision, so the default {} is used; pass --mcore to choose",
                              base->name);
        }
    }
    std::string error;
    choice.revision = revision_for_tree(*base, *root, error);
    choice.mcore_tree = root->string();
    if (!choice.revision) {
        choice.reason = fmt::format("--mcore-path {}: {}", dir, error);
        return choice;
    }
    choice.reason = fmt::format("--mcore-path {}: its config classes are read; the checks are Megatron Core {}'s ({})",
                                dir, base->name, why);
    return choice;
}

}  // namespace mbl
