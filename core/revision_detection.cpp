#include "core/revision_detection.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>

#include "core/file_text.hpp"

namespace mbl {

namespace fs = std::filesystem;

const char* revision_source_name(RevisionChoice::Source s) {
    switch (s) {
        case RevisionChoice::Source::CommandLine: return "command line";
        case RevisionChoice::Source::ConfigFile: return "configuration file";
        case RevisionChoice::Source::Detected: return "detected";
        case RevisionChoice::Source::Default: return "default";
    }
    return "default";
}

std::string detection_note(const RevisionChoice& choice) {
    const std::string rev = choice.revision ? choice.revision->name : "?";
    if (choice.checkout.empty()) return fmt::format("Megatron Core {}: {}", rev, choice.reason);  // --mcore-path
    return fmt::format("Megatron Core {} for files in {}: {}; pass --mcore to choose another revision", rev,
                       choice.checkout, choice.reason);
}

namespace {

constexpr std::uintmax_t kMaxGitFile = 64u << 20;  // an index larger than this is not read

std::optional<std::string> read_small_file(const fs::path& p) { return read_file_text(p.string(), kMaxGitFile).text; }

std::string trimmed(std::string s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
    std::size_t i = 0;
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    return s.substr(i);
}

bool is_full_hash(const std::string& s) {
    return s.size() == 40 &&
           std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; });
}

std::string lower(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// A ref's commit from the loose ref files or packed-refs of `dirs` (a work tree's own git dir, then the common one).
std::optional<std::string> resolve_ref(const std::vector<fs::path>& dirs, std::string ref) {
    for (int depth = 0; depth < 5; ++depth) {  // symbolic refs may point at other refs
        std::optional<std::string> target;
        for (const auto& dir : dirs) {
            if (auto text = read_small_file(dir / ref)) {
                target = trimmed(*text);
                break;
            }
            if (auto packed = read_small_file(dir / "packed-refs")) {
                std::istringstream lines(*packed);
                std::string line;
                while (std::getline(lines, line))
                    if (line.size() > 41 && line[40] == ' ' && trimmed(line.substr(41)) == ref)
                        target = line.substr(0, 40);
                if (target) break;
            }
        }
        if (!target) return std::nullopt;
        if (is_full_hash(*target)) return lower(*target);
        if (target->rfind("ref: ", 0) != 0) return std::nullopt;
        ref = trimmed(target->substr(5));
    }
    return std::nullopt;
}

std::uint32_t be32(const std::string& b, std::size_t at) {
    return (std::uint32_t(static_cast<unsigned char>(b[at])) << 24) |
           (std::uint32_t(static_cast<unsigned char>(b[at + 1])) << 16) |
           (std::uint32_t(static_cast<unsigned char>(b[at + 2])) << 8) |
           std::uint32_t(static_cast<unsigned char>(b[at + 3]));
}

std::string short_hash(const std::string& sha) { return sha.substr(0, 12); }

// "3rdparty/Megatron-LM is checked out at 2a75ac12c54b".
std::string pin_sentence(const MegatronPin& pin) {
    switch (pin.kind) {
        case MegatronPin::Kind::Checkout:
            return fmt::format("3rdparty/Megatron-LM is checked out at {}", short_hash(pin.commit));
        case MegatronPin::Kind::Gitlink:
            return fmt::format("its 3rdparty/Megatron-LM gitlink pins {}", short_hash(pin.commit));
        case MegatronPin::Kind::MainCommitFile: return fmt::format("its .main.commit names {}", short_hash(pin.commit));
        case MegatronPin::Kind::LockedVersion:
            return fmt::format("its uv.lock locks megatron-core {} from a package index", pin.version);
    }
    return {};
}

}  // namespace

std::optional<fs::path> git_dir_of(const fs::path& work_tree) {
    const fs::path dot_git = work_tree / ".git";
    std::error_code ec;
    if (fs::is_directory(dot_git, ec)) return dot_git;
    auto text = read_small_file(dot_git);
    if (!text) return std::nullopt;
    const std::string line = trimmed(*text);
    if (line.rfind("gitdir:", 0) != 0) return std::nullopt;
    fs::path dir = trimmed(line.substr(7));
    if (dir.is_relative()) dir = work_tree / dir;
    dir = dir.lexically_normal();
    if (!fs::is_directory(dir, ec)) return std::nullopt;
    return dir;
}

std::optional<std::string> head_commit(const fs::path& git_dir) {
    auto head = read_small_file(git_dir / "HEAD");
    if (!head) return std::nullopt;
    const std::string text = trimmed(*head);
    if (is_full_hash(text)) return lower(text);
    if (text.rfind("ref: ", 0) != 0) return std::nullopt;
    // A linked work tree (or a submodule's git dir) keeps shared refs in the directory `commondir` names.
    std::vector<fs::path> dirs{git_dir};
    if (auto common = read_small_file(git_dir / "commondir")) {
        fs::path c = trimmed(*common);
        dirs.push_back((c.is_relative() ? git_dir / c : c).lexically_normal());
    }
    return resolve_ref(dirs, trimmed(text.substr(5)));
}

std::optional<std::string> index_gitlink(const std::string& b, std::string_view path) {
    // Git's index: "DIRC", version, entry count; entries sorted by path, each 40 bytes of stat data (mode at +24),
    // the 20-byte object id, 16 bits of flags (+2 more in version 3+ when the extended bit is set), then the path:
    // NUL-terminated and padded to 8 bytes (versions 2, 3) or prefix-compressed against the previous one (4).
    if (b.size() < 12 || b.compare(0, 4, "DIRC") != 0) return std::nullopt;
    const std::uint32_t version = be32(b, 4), count = be32(b, 8);
    if (version < 2 || version > 4) return std::nullopt;
    std::size_t at = 12;
    std::string previous;
    for (std::uint32_t i = 0; i < count; ++i) {
        const std::size_t start = at;
        if (at + 62 > b.size()) return std::nullopt;
        const std::uint32_t mode = be32(b, at + 24);
        const std::string id = b.substr(at + 40, 20);
        const unsigned flags =
            (unsigned(static_cast<unsigned char>(b[at + 60])) << 8) | static_cast<unsigned char>(b[at + 61]);
        at += 62;
        if (version >= 3 && (flags & 0x4000)) at += 2;
        std::string name;
        if (version == 4) {
            // Bytes to drop from the end of the previous path, as git's offset varint.
            std::size_t drop = 0;
            for (int n = 0;; ++n) {
                if (at >= b.size() || n > 8) return std::nullopt;
                const unsigned char c = static_cast<unsigned char>(b[at++]);
                drop = (n ? (drop + 1) << 7 : 0) | (c & 0x7f);
                if (!(c & 0x80)) break;
            }
            if (drop > previous.size()) return std::nullopt;
            const std::size_t end = b.find('\0', at);
            if (end == std::string::npos) return std::nullopt;
            name = previous.substr(0, previous.size() - drop) + b.substr(at, end - at);
            at = end + 1;
        } else {
            const std::size_t end = b.find('\0', at);
            if (end == std::string::npos) return std::nullopt;
            name = b.substr(at, end - at);
            at = start + ((at - start + name.size() + 8) & ~std::size_t(7));
        }
        if (name == path) {
            if ((mode & 0170000) != 0160000) return std::nullopt;  // not a gitlink
            std::string hex;
            for (unsigned char c : id) hex += fmt::format("{:02x}", c);
            return hex;
        }
        if (name > path) return std::nullopt;  // sorted: it is not there
        previous = std::move(name);
    }
    return std::nullopt;
}

std::optional<std::string> tag_of_commit(const fs::path& git_dir, const std::string& commit) {
    // packed-refs: "<sha> refs/tags/x", and after an annotated tag "^<commit it points to>".
    if (auto packed = read_small_file(git_dir / "packed-refs")) {
        std::istringstream lines(*packed);
        std::string line, last_ref;
        while (std::getline(lines, line)) {
            if (line.size() >= 41 && line[0] == '^' && lower(line.substr(1, 40)) == commit) {
                if (last_ref.rfind("refs/tags/", 0) == 0) return last_ref.substr(10);
            } else if (line.size() > 41 && line[40] == ' ') {
                last_ref = trimmed(line.substr(41));
                if (lower(line.substr(0, 40)) == commit && last_ref.rfind("refs/tags/", 0) == 0)
                    return last_ref.substr(10);
            }
        }
    }
    std::error_code ec;
    const fs::path tags = git_dir / "refs" / "tags";
    if (!fs::is_directory(tags, ec)) return std::nullopt;
    for (auto it = fs::recursive_directory_iterator(tags, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec))
        if (auto text = read_small_file(it->path()); text && lower(trimmed(*text)) == commit)
            return fs::relative(it->path(), tags, ec).generic_string();
    return std::nullopt;
}

bool is_mcore_tree(const fs::path& root) {
    std::error_code ec;
    return fs::is_regular_file(root / "megatron" / "core" / "transformer" / "transformer_config.py", ec);
}

std::optional<std::string> mcore_package_version(const fs::path& root) {
    auto text = read_small_file(root / "megatron" / "core" / "package_info.py");
    if (!text) return std::nullopt;
    // `MAJOR = 0`, `PRE_RELEASE = "rc0"`: the version package_info.py spells out, read as text.
    std::map<std::string, std::string> parts;
    std::istringstream lines(*text);
    std::string line;
    while (std::getline(lines, line)) {
        const auto eq = line.find('=');
        if (eq == std::string::npos) continue;
        const std::string key = trimmed(line.substr(0, eq));
        if (key != "MAJOR" && key != "MINOR" && key != "PATCH" && key != "PRE_RELEASE") continue;
        std::string value = trimmed(line.substr(eq + 1));
        if (const auto hash = value.find('#'); hash != std::string::npos) value = trimmed(value.substr(0, hash));
        if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') && value.back() == value.front())
            value = value.substr(1, value.size() - 2);
        parts.try_emplace(key, value);
    }
    if (!parts.count("MAJOR") || !parts.count("MINOR") || !parts.count("PATCH")) return std::nullopt;
    return fmt::format("{}.{}.{}{}", parts["MAJOR"], parts["MINOR"], parts["PATCH"], parts["PRE_RELEASE"]);
}

std::optional<std::string> uv_lock_mcore_version(std::string_view lock) {
    // [[package]] tables: `name = "megatron-core"`, `version = "0.15.0rc6"`, `source = { registry = "..." }`.
    std::string name, version, source;
    auto found = [&]() -> std::optional<std::string> {
        if (name == "megatron-core" && !version.empty() && source.find("registry") != std::string::npos) return version;
        return std::nullopt;
    };
    auto quoted = [](const std::string& value) {
        return value.size() >= 2 && value.front() == '"' && value.back() == '"' ? value.substr(1, value.size() - 2)
                                                                                : std::string();
    };
    std::size_t start = 0;
    while (start <= lock.size()) {
        std::size_t end = lock.find('\n', start);
        if (end == std::string_view::npos) end = lock.size();
        const std::string line = trimmed(std::string(lock.substr(start, end - start)));
        start = end + 1;
        if (!line.empty() && line.front() == '[') {  // a new table ends the package's own keys
            if (auto v = found()) return v;
            if (line == "[[package]]") name.clear(), version.clear(), source.clear();
            else name = "-";  // a sub-table ([package.optional-dependencies]) says nothing of the package's source
            continue;
        }
        const auto eq = line.find('=');
        if (eq == std::string::npos) continue;
        const std::string key = trimmed(line.substr(0, eq));
        const std::string value = trimmed(line.substr(eq + 1));
        if (key == "name" && name != "-") name = quoted(value);
        else if (key == "version" && name != "-") version = quoted(value);
        else if (key == "source" && name != "-") source = value;
    }
    return found();
}

std::vector<MegatronPin> RevisionDetector::read_pins(const fs::path& root) {
    std::vector<MegatronPin> pins;
    // The checked-out submodule is the code the job imports (Bridge installs megatron-core from 3rdparty/Megatron-LM)
    // and what scripts/switch_mcore.sh changes, so it wins over the commit the superproject records.
    if (auto dir = git_dir_of(root / "3rdparty" / "Megatron-LM"))
        if (auto sha = head_commit(*dir)) pins.push_back({MegatronPin::Kind::Checkout, *sha});
    if (auto dir = git_dir_of(root))
        if (auto index = read_small_file(*dir / "index"))
            if (auto sha = index_gitlink(*index, "3rdparty/Megatron-LM"))
                pins.push_back({MegatronPin::Kind::Gitlink, *sha});
    if (auto text = read_small_file(root / ".main.commit")) {
        const std::string sha = trimmed(*text);
        if (is_full_hash(sha)) pins.push_back({MegatronPin::Kind::MainCommitFile, lower(sha)});
    }
    // A checkout that installs megatron-core from a package index (Bridge before its 3rdparty/Megatron-LM
    // submodule, August to October 2025) locks the version in uv.lock, which `uv sync` installs.
    if (auto text = read_small_file(root / "uv.lock"))
        if (auto version = uv_lock_mcore_version(*text))
            pins.push_back({MegatronPin::Kind::LockedVersion, std::string(), *version});
    return pins;
}

namespace {

// The version of the Megatron Core a checkout pins at `commit`: the tree's package_info.py, else a core_v tag naming
// the commit in the submodule's git data. Sets `from` to where it was read.
std::optional<std::string> pinned_version(const fs::path& root, const std::string& commit, bool tree,
                                          std::string& from) {
    const fs::path submodule = root / "3rdparty" / "Megatron-LM";
    if (tree)
        if (auto v = mcore_package_version(submodule)) {
            from = fmt::format("its megatron/core/package_info.py says {}", *v);
            return v;
        }
    std::vector<fs::path> git_dirs;
    if (auto d = git_dir_of(submodule)) git_dirs.push_back(*d);
    if (auto d = git_dir_of(root)) git_dirs.push_back(*d / "modules" / "3rdparty" / "Megatron-LM");
    for (const auto& dir : git_dirs)
        if (auto tag = tag_of_commit(dir, commit); tag && tag->rfind("core_v", 0) == 0) {
            from = fmt::format("the tag {} names it", *tag);
            return tag;
        }
    return std::nullopt;
}

}  // namespace

RevisionChoice RevisionDetector::choose(const fs::path& root, const std::vector<MegatronPin>& pins) {
    const Schema& schema = Schema::instance();
    RevisionChoice out;
    out.source = RevisionChoice::Source::Detected;
    out.checkout = root.string();
    // The code the job imports, when it is there: its config classes are read instead of the bundled ones.
    const fs::path submodule = root / "3rdparty" / "Megatron-LM";
    const bool tree = is_mcore_tree(submodule);
    if (tree) out.mcore_tree = submodule.string();
    const std::string read_note = tree ? "; its config classes are read from the checkout" : "";
    const Revision* fallback = schema.revision(schema.default_revision());
    if (pins.empty()) {
        out.revision = fallback;
        out.approximate = !tree;
        out.reason = fmt::format("it pins no Megatron-LM commit (no checked-out 3rdparty/Megatron-LM, no gitlink, no "
                                 ".main.commit), so the default {} is used{}",
                                 fallback->name, read_note);
        return out;
    }
    const MegatronPin& first = pins.front();
    if (first.kind == MegatronPin::Kind::LockedVersion) {
        // A released version: its tag's facts when the linter has them, else the nearest revision's.
        if (const Revision* r = schema.revision("core_v" + first.version)) {
            out.revision = r;
            out.reason = pin_sentence(first) + read_note;
            return out;
        }
        std::string why;
        out.approximate = !tree;
        if (const Revision* r = schema.nearest_revision(first.version, why)) {
            out.revision = r;
            out.reason = fmt::format("{}, a version mbridge-lint has no facts of its own for: {}, so its checks are "
                                     "used{}",
                                     pin_sentence(first), why, read_note);
            return out;
        }
        out.revision = fallback;
        out.reason = fmt::format("{}, a version mbridge-lint cannot place, so the default {} is used{}",
                                 pin_sentence(first), fallback->name, read_note);
        return out;
    }
    out.commit = first.commit;
    // What the other pins say, when they differ from the one that decides.
    std::string context;
    if (first.kind == MegatronPin::Kind::Checkout) {
        for (const auto& pin : pins)
            if (pin.kind == MegatronPin::Kind::Gitlink && pin.commit != first.commit)
                context = fmt::format(" (the committed gitlink pins {})", short_hash(pin.commit));
    } else if (first.kind == MegatronPin::Kind::Gitlink) {
        context = tree ? "" : "; the submodule is not checked out";
    } else {
        context = "; there is no 3rdparty/Megatron-LM gitlink or checkout";
    }
    if (const Revision* r = schema.revision_for_commit(first.commit)) {
        out.revision = r;
        out.reason = pin_sentence(first) + context + read_note;
        return out;
    }
    const std::string unknown = fmt::format("{}, a commit mbridge-lint knows no revision for", pin_sentence(first));
    out.approximate = !tree;
    if (auto place = schema.locate_commit(first.commit); place && place->nearest) {
        out.revision = place->nearest;
        out.confirm = place->other;
        out.reason = fmt::format("{}{}; {}{}", pin_sentence(first), context, commit_place_sentence(*place), read_note);
        return out;
    }
    std::string from, why;
    if (auto version = pinned_version(root, first.commit, tree, from))
        if (const Revision* r = schema.nearest_revision(*version, why)) {
            out.revision = r;
            out.reason = fmt::format("{}; {}: {}, so its checks are used{}", unknown, from, why, read_note);
            return out;
        }
    for (const auto& pin : pins) {
        if (pin.commit == first.commit) continue;
        if (const Revision* r = schema.revision_for_commit(pin.commit)) {
            out.revision = r;
            out.reason =
                fmt::format("{}; {} ({}), so that revision is used{}", unknown, pin_sentence(pin), r->name, read_note);
            return out;
        }
    }
    // Not in the table of Megatron-LM's public history, which is complete up to its newest commit: most likely newer.
    const CommitPlace newest = schema.newest_main_commit();
    out.revision = newest.nearest ? newest.nearest : fallback;
    out.reason = fmt::format("{}; it is not among the Megatron-LM commits mbridge-lint lists (main and dev to {}, the "
                             "release tags, Megatron Bridge's pins), so it is taken as newer and the facts of {}, the "
                             "newest, stand in; check out 3rdparty/Megatron-LM or pass --mcore-path to check it "
                             "exactly{}",
                             unknown, newest.date, out.revision->name, read_note);
    return out;
}

std::string commit_place_sentence(const CommitPlace& place) {
    std::string s =
        fmt::format("that is {} of {}{}, which mbridge-lint has no facts for; those of {}, the nearest "
                    "revision, stand in",
                    place.where.rfind("core_v", 0) == 0 ? "the tag " + place.where : "a commit", place.date,
                    place.where == "main" || place.where == "dev" ? fmt::format(" on {}", place.where) : std::string(),
                    place.nearest->name);
    if (place.other && place.other != place.nearest)
        s += fmt::format(", and a check {}'s source does not state too is only a warning", place.other->name);
    return s;
}

std::optional<fs::path> RevisionDetector::checkout_root(const fs::path& start) {
    std::vector<fs::path> visited;
    std::optional<fs::path> found;
    std::error_code ec;
    for (fs::path dir = start;; dir = dir.parent_path()) {
        if (auto it = root_of_dir_.find(dir.native()); it != root_of_dir_.end()) {
            found = it->second;
            break;
        }
        visited.push_back(dir);
        // The nearest Bridge source tree decides; it is a checkout when it pins Megatron-LM somehow.
        if (fs::is_directory(dir / "src" / "megatron" / "bridge", ec)) {
            if (fs::exists(dir / "3rdparty" / "Megatron-LM", ec) || fs::exists(dir / ".main.commit", ec)) {
                found = dir;
            } else if (auto lock = read_small_file(dir / "uv.lock"); lock && uv_lock_mcore_version(*lock)) {
                found = dir;
            }
            break;
        }
        if (!dir.has_parent_path() || dir.parent_path() == dir) break;
    }
    for (const auto& d : visited) root_of_dir_[d.native()] = found;
    return found;
}

std::optional<RevisionChoice> RevisionDetector::detect(const std::string& path) {
    if (path.empty() || path[0] == '<') return std::nullopt;  // <override 1>, <command line>
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (auto it = by_path_.find(path); it != by_path_.end()) return it->second;
    }
    std::optional<RevisionChoice> found = detect_uncached(path);
    std::lock_guard<std::mutex> lock(mutex_);
    by_path_.emplace(path, found);
    return found;
}

std::optional<RevisionChoice> RevisionDetector::detect_uncached(const std::string& path) {
    std::error_code ec;
    fs::path p = fs::absolute(path, ec);
    if (ec) return std::nullopt;
    p = p.lexically_normal();
    if (!fs::is_directory(p, ec)) p = p.parent_path();
    std::lock_guard<std::mutex> lock(mutex_);
    const auto root = checkout_root(p);
    if (!root) return std::nullopt;
    auto it = by_root_.find(root->native());
    if (it == by_root_.end()) it = by_root_.emplace(root->native(), choose(*root, read_pins(*root))).first;
    return it->second;
}

}  // namespace mbl
