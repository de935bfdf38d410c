#include "core/schema.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <tuple>

#include "core/did_you_mean.hpp"
#include "core/embedded_data.hpp"
#include "core/fact_store.hpp"
#include "core/post_init.hpp"

namespace mbl {

using nlohmann::json;

std::optional<std::string_view> schema_file(std::string_view path) {
    for (const auto& [name, text] : embedded_schema_files())
        if (name == path) return text;
    return std::nullopt;
}

static json parse_schema_file(std::string_view path) {
    auto text = schema_file(path);
    if (!text) throw std::runtime_error(fmt::format("schema file schemas/{} is missing from the build", path));
    try {
        return json::parse(*text);
    } catch (const json::parse_error& e) {
        throw std::runtime_error(fmt::format("schemas/{} is not valid JSON: {}", path, e.what()));
    }
}

Value value_from_json(const json& j, const Provenance& prov) {
    switch (j.type()) {
        case json::value_t::null: return Value::null(prov);
        case json::value_t::boolean: return Value::boolean(j.get<bool>(), prov);
        case json::value_t::number_integer:
        case json::value_t::number_unsigned: return Value::integer(j.get<std::int64_t>(), prov);
        case json::value_t::number_float: return Value::floating(j.get<double>(), prov);
        case json::value_t::string: return Value::string(j.get<std::string>(), prov);
        case json::value_t::array: {
            std::vector<Value> items;
            for (const auto& e : j) items.push_back(value_from_json(e, prov));
            return Value::list(std::move(items), prov);
        }
        case json::value_t::object: {
            Value m = Value::map(prov);
            for (auto it = j.begin(); it != j.end(); ++it) m.set(it.key(), value_from_json(it.value(), prov));
            return m;
        }
        default: return Value::null(prov);
    }
}

static std::vector<std::string> string_list(const json& j, const char* key) {
    std::vector<std::string> out;
    if (j.contains(key))
        for (const auto& e : j.at(key)) out.push_back(e.get<std::string>());
    return out;
}

const std::vector<std::string>& Revision::enum_values(RevisionEnum key) const {
    static const std::vector<std::string> none;
    auto it = enums.find(key.str());
    return it == enums.end() ? none : it->second;
}

// A list a revision file states in full (`key`) or as changes to the one it extends (`key_add`, `key_remove`).
static void layered_list(const json& j, const std::string& key, std::vector<std::string>& list) {
    if (j.contains(key)) list = string_list(j, key.c_str());
    for (auto& l : string_list(j, (key + "_add").c_str())) list.push_back(l);
    for (auto& l : string_list(j, (key + "_remove").c_str())) std::erase(list, l);
}

bool Revision::discards_output(std::string_view label) const {
    return std::find(output_discarding.begin(), output_discarding.end(), label) != output_discarding.end();
}

bool Revision::has_label(std::string_view label) const {
    return std::find(labels.begin(), labels.end(), label) != labels.end();
}

namespace {

void set_provenance(Value& v, const Provenance& p) {
    v.set_prov(p);
    if (v.is_list())
        for (auto& item : v.items()) set_provenance(item, p);
    if (v.is_map())
        for (auto& e : v.entries()) set_provenance(e.value, p);
}

// TransformerConfig's literal defaults (its bases' included), in the constructor's order.
std::vector<std::pair<std::string, Value>> class_defaults(const ClassFacts& facts, const std::string& revision) {
    std::vector<std::pair<std::string, Value>> out;
    const Provenance prov = Provenance::default_of(fmt::format("default of Megatron Core {}", revision));
    for (const ResolvedField& r : facts.fields_of("TransformerConfig")) {
        if (!r.field->default_value) continue;
        Value v = *r.field->default_value;
        set_provenance(v, prov);
        out.emplace_back(r.field->name, std::move(v));
    }
    return out;
}

}  // namespace

void apply_class_facts(Revision& rev, std::shared_ptr<const ClassFacts> facts) {
    rev.classes = std::move(facts);
    if (!rev.classes->labels.empty()) rev.labels = rev.classes->labels;
    if (!rev.classes->default_modules.empty()) rev.default_modules = rev.classes->default_modules;
    rev.defaults = class_defaults(*rev.classes, rev.name);
    rev.defaults_map = std::make_shared<const Value>(map_of_defaults(rev.defaults));
}

Value map_of_defaults(const std::vector<std::pair<std::string, Value>>& defaults) {
    Value out = Value::map();
    for (const auto& [name, v] : defaults) out.set(name, v);
    return out;
}

std::string Revision::facts_source() const {
    if (!classes) return "no config classes";
    return facts_note.empty() ? classes->origin : fmt::format("{}; {}", classes->origin, facts_note);
}

namespace {

// A revision's config classes, generated from its source (schemas/mcore/classes/<name>.json).
void load_class_facts(Revision& rev) {
    const std::string& name = rev.name;
    const json j = parse_schema_file(fmt::format("mcore/classes/{}.json", name));
    try {
        apply_class_facts(rev, std::make_shared<const ClassFacts>(ClassFacts::from_json(j)));
    } catch (const json::exception& e) {
        throw std::runtime_error(fmt::format("schemas/mcore/classes/{}.json: {}", name, e.what()));
    }
    if (rev.labels.empty())
        throw std::runtime_error(fmt::format("schemas/mcore/classes/{}.json states no recompute labels", name));
    // The compiled __post_init__ checks of the revision's commit, from the fact store (schemas/mcore/facts/, which holds
    // every named revision's commit: tests/unit/test_fact_store.cpp).
    const std::string commit = rev.classes->commit;
    if (const fact_store::Row* row = commit.empty() ? nullptr : fact_store::find(commit)) {
        auto facts = std::make_shared<ClassFacts>(*rev.classes);
        facts->checks = std::make_shared<const LazyProgram>([row, name] {
            try {
                return std::make_shared<const post_init::Program>(
                    post_init::Program::from_json(fact_store::checks(*row)));
            } catch (const std::runtime_error& e) {
                throw std::runtime_error(fmt::format("the compiled checks of Megatron Core {}: {}", name, e.what()));
            }
        });
        rev.classes = std::move(facts);
    }
}

}  // namespace

const post_init::Program& Schema::bridge_checks() const {
    static const post_init::Program program = [] {
        try {
            return post_init::Program::from_json(parse_schema_file("bridge/checks.json"));
        } catch (const std::runtime_error& e) {
            throw std::runtime_error(fmt::format("schemas/bridge/checks.json: {}", e.what()));
        }
    }();
    return program;
}

const Revision* Schema::ready(const Revision* r) const {
    if (!r) return nullptr;
    const auto i = static_cast<std::size_t>(r - revisions_.data());
    std::call_once(loaded_[i], [this, i] { load_class_facts(revisions_[i]); });
    return r;
}

void Schema::read_field_specs() {
    // Megatron Core: every field of the known revisions, typed as the newest revision declaring it.
    const json history = parse_schema_file("mcore/classes/fields.json");
    for (auto it = history.at("fields").begin(); it != history.at("fields").end(); ++it) {
        FieldSpec f;
        f.name = it.key();
        f.first = it->value("first", "");
        f.last = it->value("last", "");
        f.not_in = string_list(*it, "not_in");
        f.type = parse_field_type(it->value("type", "any"));
        f.nullable = it->value("nullable", false);
        f.enum_values = string_list(*it, "values");
        const auto owners = string_list(*it, "classes");
        f.owner = owners.empty() ? "" : owners.front();
        fields_.emplace(f.name, std::move(f));
    }
    // Megatron Bridge: the fields its model classes declare.
    const json bridge = parse_schema_file("bridge/model_fields.json");
    for (auto it = bridge.at("fields").begin(); it != bridge.at("fields").end(); ++it) {
        auto [pos, added] = fields_.try_emplace(it.key());
        FieldSpec& f = pos->second;
        f.name = it.key();
        f.bridge_type = parse_field_type(it->value("type", "any"));
        f.bridge_source = fmt::format("{} in Megatron Bridge {}", it->value("class", ""), it->value("source", ""));
        if (added) {
            f.type = f.bridge_type;
            f.nullable = it->value("nullable", false);
            f.owner = it->value("class", "");
        }
    }
    for (const auto& [name, f] : fields_) field_names_.push_back(name);
    for (auto it = bridge.at("classes").begin(); it != bridge.at("classes").end(); ++it)
        bridge_classes_[it.key()] = it->get<std::vector<std::string>>();
}

bool Schema::knows_model_class(std::string_view dotted, const Revision& rev) const {
    const auto dot = dotted.rfind('.');
    if (dot == std::string_view::npos) return false;
    const std::string_view module = dotted.substr(0, dot), name = dotted.substr(dot + 1);
    if (rev.classes && config_class_for_path(*rev.classes, dotted)) return true;
    // Bridge re-exports its classes from its packages (megatron.bridge.models.Llama3ModelProvider8B).
    auto it = bridge_classes_.find(name);
    if (it == bridge_classes_.end()) return false;
    for (const auto& m : it->second)
        if (m == module || m.starts_with(std::string(module) + ".")) return true;
    return false;
}

Schema::Schema() {
    const json index = parse_schema_file("mcore/index.json");
    default_revision_ = index.at("default").get<std::string>();
    const json aliases = index.value("aliases", json::object());
    for (auto it = aliases.begin(); it != aliases.end(); ++it) aliases_[it.key()] = it.value().get<std::string>();
    const json ambiguous = index.value("ambiguous", json::object());
    for (auto it = ambiguous.begin(); it != ambiguous.end(); ++it) ambiguous_[it.key()] = it.value().get<std::string>();

    int order = 0;
    for (const auto& name_json : index.at("order")) {
        const std::string name = name_json.get<std::string>();
        const json j = parse_schema_file(fmt::format("mcore/{}.json", name));
        Revision rev;
        if (j.contains("extends")) {
            const std::string base = j.at("extends").get<std::string>();
            auto it =
                std::find_if(revisions_.begin(), revisions_.end(), [&](const Revision& r) { return r.name == base; });
            if (it == revisions_.end())
                throw std::runtime_error(
                    fmt::format("schemas/mcore/{}.json extends unknown or later revision {}", name, base));
            rev = *it;
        }
        rev.name = name;
        rev.order = order++;
        rev.description = j.value("description", "");
        // What the name stands for is the revision's own, never inherited.
        rev.release = j.value("release", "");
        rev.tags.clear();
        if (j.contains("tags"))
            for (auto it = j.at("tags").begin(); it != j.at("tags").end(); ++it)
                rev.tags.emplace_back(it.key(), it.value().get<std::string>());
        rev.commit = j.value("commit", "");
        rev.date = j.value("date", "");
        rev.branch = j.value("branch", "");
        rev.pinned_by = j.value("pinned_by", "");
        if (rev.release.empty() == rev.commit.empty())
            throw std::runtime_error(fmt::format("schemas/mcore/{}.json must name either a release or a commit", name));
        layered_list(j, "output_discarding_recompute_modules", rev.output_discarding);
        if (j.contains("enums"))
            for (auto it = j.at("enums").begin(); it != j.at("enums").end(); ++it)
                rev.enums[it.key()] = it.value().get<std::vector<std::string>>();
        if (j.contains("known_crashes")) {
            auto v = string_list(j, "known_crashes");
            rev.known_crashes = {v.begin(), v.end()};
        }
        revisions_.push_back(std::move(rev));
    }
    // The config classes of a revision are read when it is first looked up (ready()): a run reads one or two.
    loaded_ = std::make_unique<std::once_flag[]>(revisions_.size());
    hand_written_ = revisions_;
    for (const auto& [alias, target] : aliases_) {
        const std::string& named = target;  // a lambda may not capture a structured binding before clang 16
        if (std::none_of(revisions_.begin(), revisions_.end(), [&](const Revision& r) { return r.name == named; }) ||
            ambiguous_.count(alias))
            throw std::runtime_error(fmt::format("schemas/mcore/index.json: alias {} must name one revision", alias));
    }

    read_field_specs();

    const json precision = parse_schema_file("precision.json");
    const Provenance none;
    for (auto it = precision.at("recipes").begin(); it != precision.at("recipes").end(); ++it) {
        PrecisionRecipe r;
        r.name = it.key();
        const json& fields = it.value().at("fields");
        for (auto f = fields.begin(); f != fields.end(); ++f)
            r.fields.emplace_back(f.key(), value_from_json(f.value(), none));
        precision_.push_back(std::move(r));
    }
    sections_ = string_list(parse_schema_file("config_container.json"), "sections");
}

const Schema& Schema::instance() {
    static const Schema schema;
    return schema;
}

static bool is_commit_prefix(std::string_view s) {
    return s.size() >= 7 && s.size() <= 40 &&
           std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; });
}

static std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// Whether a recorded commit and a wanted one (lower case) are the same: either is a prefix of the other.
static bool same_commit(const std::string& recorded, const std::string& wanted) {
    const std::size_t n = std::min(recorded.size(), wanted.size());
    return recorded.compare(0, n, wanted, 0, n) == 0;
}

std::string Revision::what() const {
    if (!release.empty()) {
        std::string out = fmt::format("release {}", release);
        // Patch releases it stands for: those without facts of their own in the store.
        std::vector<std::string> patches;
        for (const auto& [tag, sha] : tags)
            if (tag != release && !fact_store::find(tag)) patches.push_back(tag.substr(tag.rfind('.') + 1));
        if (!patches.empty()) out += fmt::format(" (patch releases .{} too)", fmt::join(patches, ", ."));
        return out;
    }
    std::string out = fmt::format("commit {} ({}{})", commit.substr(0, 12), date,
                                  branch.empty() ? "" : fmt::format(", {} branch", branch));
    if (!pinned_by.empty()) out += ", " + pinned_by;
    return out;
}

std::optional<std::string> Revision::matches_commit(std::string_view sha) const {
    if (!is_commit_prefix(sha)) return std::nullopt;
    const std::string wanted = lower(sha);
    if (!commit.empty() && same_commit(commit, wanted)) return commit;
    for (const auto& [tag, recorded] : tags)
        if (same_commit(recorded, wanted)) return tag;
    return std::nullopt;
}

RevisionLookup Schema::lookup_revision(std::string_view name) const {
    std::string key(name);
    if (auto it = ambiguous_.find(key); it != ambiguous_.end()) return {nullptr, it->second};
    if (auto it = aliases_.find(key); it != aliases_.end()) key = it->second;
    const std::string bare = key.rfind("core_v", 0) == 0 ? key.substr(6) : key;  // "core_v0.19" -> "0.19"
    for (const auto& r : revisions_)
        if (r.name == key || (!r.release.empty() && r.name == bare)) return {ready(&r), {}};
    // A release tag, with or without the "core_v" prefix: "core_v0.19.0", "0.15.2". A patch release with facts of its
    // own in the store is that commit; the named revision stands for it only where the store lacks it.
    const std::string tag_name =
        bare == key && !key.empty() && std::isdigit(static_cast<unsigned char>(key[0])) ? "core_v" + key : key;
    for (const auto& r : revisions_)
        if (r.release == tag_name) return {ready(&r), {}};
    if (const Revision* r = stored_revision(tag_name)) return {r, {}};
    for (const auto& r : revisions_)
        for (const auto& [tag, sha] : r.tags)
            if (tag_name == tag) return {ready(&r), {}};
    if (const Revision* r = revision_for_commit(key)) return {r, {}};
    return {};
}

const Revision* Schema::stored_revision(std::string_view name) const {
    const fact_store::Row* row = fact_store::find(name);
    if (!row) return nullptr;
    // A named revision's own commit is that revision.
    if (const Revision* named = named_revision_for_commit(row->commit)) return named;
    // The base's hand-written facts only (as the constructor left them, its config classes unread): the commit's own
    // classes and checks replace the rest.
    const auto found = std::find_if(hand_written_.begin(), hand_written_.end(),
                                    [&](const Revision& r) { return r.name == row->base; });
    if (found == hand_written_.end())
        throw std::runtime_error(
            fmt::format("schemas/mcore/facts: {} takes unknown revision {}", row->name, row->base));
    const Revision* base = &revisions_[static_cast<std::size_t>(found - hand_written_.begin())];
    std::lock_guard<std::mutex> lock(stored_mutex_);
    auto [it, added] = stored_.try_emplace(row->commit);
    if (!added) return it->second.get();
    auto rev = std::make_unique<Revision>(*found);
    rev->name = row->name;
    rev->description = fmt::format("Megatron-LM {} ({}, {})", row->commit.substr(0, 12), row->date, row->where);
    const bool tag = row->where.starts_with("core_v");
    rev->release = tag ? row->where : "";
    rev->tags.clear();
    if (tag) rev->tags.emplace_back(row->where, row->commit);
    rev->commit = row->commit;
    rev->date = row->date;
    rev->branch = row->where == "main" || row->where == "dev" ? row->where : "";
    rev->pinned_by = row->where.starts_with("pinned") ? "pinned by a Megatron Bridge branch or tag" : "";
    const fact_store::Row* stored = row;
    try {
        auto facts = std::make_shared<ClassFacts>(ClassFacts::from_json(fact_store::classes(*stored)));
        facts->checks = std::make_shared<const LazyProgram>([stored] {
            return std::make_shared<const post_init::Program>(
                post_init::Program::from_json(fact_store::checks(*stored)));
        });
        apply_class_facts(*rev, std::move(facts));
    } catch (const json::exception& e) {
        throw std::runtime_error(fmt::format("schemas/mcore/facts: {}: {}", row->name, e.what()));
    }
    // A commit whose __post_init__ states no recompute labels (before 0.12) takes its base's, as the nearest did.
    if (rev->labels.empty()) rev->labels = ready(base)->labels;
    if (rev->default_modules.empty()) rev->default_modules = ready(base)->default_modules;
    it->second = std::move(rev);
    return it->second.get();
}

const Revision* Schema::revision(std::string_view name) const { return lookup_revision(name).revision; }

std::string Schema::revision_what(std::string_view name) const {
    for (const auto& r : revisions_)
        if (r.name == name) return r.what();
    return {};
}

const Revision* Schema::named_revision_for_commit(std::string_view sha) const {
    if (!is_commit_prefix(sha)) return nullptr;
    const std::string wanted = lower(sha);
    for (const auto& r : revisions_) {
        if (!r.commit.empty() && same_commit(r.commit, wanted)) return ready(&r);
        for (const auto& [tag, recorded] : r.tags)
            if (tag == r.release && same_commit(recorded, wanted)) return ready(&r);
    }
    return nullptr;
}

const Revision* Schema::revision_for_commit(std::string_view sha) const {
    if (const Revision* r = named_revision_for_commit(sha)) return r;
    if (is_commit_prefix(sha))
        if (const Revision* r = stored_revision(sha)) return r;
    for (const auto& r : revisions_)
        if (r.matches_commit(sha)) return ready(&r);
    return nullptr;
}

const std::vector<Schema::CommitRow>& Schema::commit_rows() const {
    static const std::vector<CommitRow> rows = [] {
        std::vector<CommitRow> out;
        const nlohmann::json table = parse_schema_file("mcore/commits.json");
        for (const auto& row : table.at("commits")) {
            auto text = [&](std::size_t i) {
                return row.at(i).is_null() ? std::string() : row.at(i).get<std::string>();
            };
            out.push_back({text(0), text(1), text(2), text(3), text(4)});
        }
        return out;
    }();
    return rows;
}

CommitPlace Schema::place_of(const CommitRow& row) const {
    CommitPlace place{row.hash, row.date, row.where, revision(row.nearest), nullptr};
    if (!row.other.empty()) place.other = revision(row.other);
    return place;
}

std::optional<CommitPlace> Schema::locate_commit(std::string_view sha) const {
    if (!is_commit_prefix(sha)) return std::nullopt;
    const std::string wanted = lower(sha);
    const CommitRow* found = nullptr;
    for (const auto& row : commit_rows()) {
        if (!same_commit(row.hash, wanted)) continue;
        if (found) return std::nullopt;  // a short prefix that names two commits names none
        found = &row;
    }
    if (!found) return std::nullopt;
    return place_of(*found);
}

CommitPlace Schema::newest_main_commit() const {
    const CommitRow* newest = nullptr;
    for (const auto& row : commit_rows())
        if (row.where == "main" && (!newest || row.date >= newest->date)) newest = &row;
    return newest ? place_of(*newest) : CommitPlace{};
}

namespace {

struct ReleaseVersion {
    int major = 0, minor = 0, patch = 0;
    std::string pre;  // "rc1", "" for a release
};

std::optional<ReleaseVersion> parse_release_version(std::string_view text) {
    if (text.starts_with("core_v")) text.remove_prefix(6);
    ReleaseVersion v;
    int* parts[] = {&v.major, &v.minor, &v.patch};
    std::size_t i = 0;
    for (int k = 0; k < 3; ++k) {
        if (k > 0) {
            if (i >= text.size() || text[i] != '.') return k == 2 ? std::optional(v) : std::nullopt;
            ++i;
        }
        const std::size_t start = i;
        while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])))
            *parts[k] = *parts[k] * 10 + (text[i++] - '0');
        if (i == start) return std::nullopt;
    }
    v.pre = std::string(text.substr(i));
    return v;
}

}  // namespace

const Revision* Schema::nearest_revision(std::string_view version, std::string& why) const {
    const auto v = parse_release_version(version);
    if (!v) return nullptr;
    // Releases by their tag; commits of the main branch by the version their package reports. The dev branch is a
    // line of its own: only its own commit names it.
    const Revision* same_line = nullptr;  // the first known revision of the version's major.minor
    const Revision* older = nullptr;      // the last known revision before it
    for (const auto& r : revisions_) {
        if (r.release.empty() && r.branch != "main") continue;
        const std::string reported = !r.release.empty() ? r.release : ready(&r)->classes->package_version;
        const auto rv = parse_release_version(reported);
        if (!rv) continue;
        if (rv->major == v->major && rv->minor == v->minor) {
            if (!same_line) same_line = &r;
        } else if (std::tie(rv->major, rv->minor) < std::tie(v->major, v->minor)) {
            older = &r;
        }
    }
    if (same_line) {
        why = fmt::format("{} is on the {}.{} line, whose first known revision is {} ({})", version, v->major, v->minor,
                          same_line->name, same_line->what());
        return ready(same_line);
    }
    if (older) {
        why = fmt::format("{} is newer than every known revision; the newest before it is {} ({})", version,
                          older->name, older->what());
        return ready(older);
    }
    return nullptr;
}

std::string Schema::revision_error(std::string_view name, std::string_view setting) const {
    const RevisionLookup found = lookup_revision(name);
    if (found.revision) return {};
    const std::vector<std::string> names = revision_names();
    if (!found.ambiguity.empty())
        return fmt::format("Megatron Core revision \"{}\" for {} is ambiguous: {}; pass one of {}", name, setting,
                           found.ambiguity, fmt::join(names, ", "));
    return fmt::format("unknown Megatron Core revision \"{}\" for {}{}; known revisions: {} (default {})", name,
                       setting, did_you_mean_suffix(std::string(name), names), fmt::join(names, ", "),
                       default_revision_);
}

std::vector<std::string> Schema::revision_names() const {
    std::vector<std::string> out;
    for (const auto& r : revisions_) out.push_back(r.name);
    return out;
}

const FieldSpec* Schema::field(std::string_view name) const {
    auto it = fields_.find(name);
    return it == fields_.end() ? nullptr : &it->second;
}

bool Schema::field_exists_at(const FieldSpec& f, const Revision& rev) const {
    return !f.bridge_source.empty() || rev.has_field(f.name);
}

FieldSpec Schema::field_at(const FieldSpec& f, const Revision& rev) const {
    FieldSpec out = f;
    if (ResolvedField d = rev.classes ? rev.classes->any(f.name) : ResolvedField{}; d.field) out.owner = d.owner->name;
    const FieldTypeAt at = field_type_at(f, rev);
    out.type = at.type;
    out.nullable = at.nullable;
    out.enum_values = *at.enum_values;
    return out;
}

FieldTypeAt Schema::field_type_at(const FieldSpec& f, const Revision& rev) const {
    FieldTypeAt out{f.type, f.nullable, &f.enum_values};
    if (ResolvedField d = rev.classes ? rev.classes->any(f.name) : ResolvedField{}; d.field) {
        out.type = d.field->type;
        out.nullable = d.field->nullable;
        out.enum_values = &d.field->values;
        // Python does not check annotations: where a Bridge class declares the field otherwise, either type is held.
        if (!f.bridge_source.empty() && f.bridge_type != out.type) out.type = FieldType::Any;
    } else if (!f.bridge_source.empty()) {
        out.type = f.bridge_type;
    }
    return out;
}

std::string Schema::field_history(const FieldSpec& f) const {
    if (f.first.empty()) return "no Megatron Core revision mbridge-lint knows has it";
    std::string out = f.first == f.last ? fmt::format("it is only in Megatron Core {}", f.first)
                      : f.last == revisions_.back().name
                          ? fmt::format("it is in Megatron Core {} and later", f.first)
                          : fmt::format("it is in Megatron Core {} to {}", f.first, f.last);
    if (!f.not_in.empty()) out += fmt::format(", not in {}", fmt::join(f.not_in, ", "));
    return out;
}

const PrecisionRecipe* Schema::precision_recipe(std::string_view name) const {
    for (const auto& r : precision_)
        if (r.name == name) return &r;
    return nullptr;
}

std::vector<std::string> Schema::precision_recipe_names() const {
    std::vector<std::string> out;
    for (const auto& r : precision_) out.push_back(r.name);
    return out;
}

const json& Schema::model_catalog() const {
    static const json catalog = parse_schema_file("models/hf-architectures.json");
    return catalog;
}

}  // namespace mbl
