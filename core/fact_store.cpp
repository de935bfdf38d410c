#include "core/fact_store.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "core/schema.hpp"

namespace mbl::fact_store {

using nlohmann::json;

namespace {

constexpr std::string_view kPieces = "mcore/facts/pieces.jsonl";
constexpr std::string_view kIndex = "mcore/facts/index.jsonl";

// The lines of an embedded JSON Lines file, found once; a piece is parsed only when a commit needs it.
std::vector<std::string_view> lines_of(std::string_view text) {
    std::vector<std::string_view> out;
    while (!text.empty()) {
        const auto end = text.find('\n');
        out.push_back(text.substr(0, end));
        if (end == std::string_view::npos) break;
        text.remove_prefix(end + 1);
    }
    return out;
}

const std::vector<std::string_view>& piece_lines() {
    static const std::vector<std::string_view> lines = lines_of(schema_file(kPieces).value_or(""));
    return lines;
}

json piece(std::size_t id) {
    const auto& lines = piece_lines();
    if (id >= lines.size()) throw std::runtime_error(fmt::format("schemas/{}: no piece {}", kPieces, id));
    return json::parse(lines[id]);
}

std::size_t id_of(const json& j) { return j.get<std::size_t>(); }

// The items of a sequence ([[chunk, line], ...]) with their lines: (piece id, line).
std::vector<std::pair<std::size_t, long>> items(const json& sequence, long base) {
    std::vector<std::pair<std::size_t, long>> out;
    for (const auto& chunk : sequence) {
        const long first = base + chunk.at(1).get<long>();
        for (const auto& item : piece(id_of(chunk.at(0))))
            out.emplace_back(id_of(item.at(0)), first + item.at(1).get<long>());
    }
    return out;
}

constexpr const char* kBlocks[] = {"b", "x"};  // a statement's nested blocks: body, else

// A function's sites in the order its body states them (a statement's nested blocks before it).
using OwnedSites = std::vector<json>;

json decode_block(const json& sequence, long base, const json& head, OwnedSites& owned);

json decode_statement(json stmt, long line, const json& head, OwnedSites& owned) {
    stmt["l"] = line;
    for (const char* key : kBlocks)
        if (stmt.contains(key)) stmt[key] = decode_block(stmt.at(key), line, head, owned);
    return stmt;
}

json decode_block(const json& sequence, long base, const json& head, OwnedSites& owned) {
    json out = json::array();
    for (const auto& [id, line] : items(sequence, base)) {
        json stmt = piece(id);
        json site;
        if (stmt.contains("site")) {
            site = std::move(stmt.at("site"));
            stmt.erase("site");
            site["line"] = site.at("line").get<long>() + line;
            site["function"] = head.at("name");
            site["file"] = head.at("file");
            stmt["site"] = -1;  // numbered once every function is decoded
        }
        out.push_back(decode_statement(std::move(stmt), line, head, owned));
        if (!site.is_null()) owned.push_back(std::move(site));
    }
    return out;
}

// The statements naming a site, in the order decode_block met the sites.
void statements_with_sites(json& block, std::vector<json*>& out) {
    for (auto& stmt : block) {
        for (const char* key : kBlocks)
            if (stmt.contains(key)) statements_with_sites(stmt.at(key), out);
        if (stmt.contains("site")) out.push_back(&stmt);
    }
}

}  // namespace

const std::vector<Row>& rows() {
    static const std::vector<Row> table = [] {
        std::vector<Row> out;
        for (const auto line : lines_of(schema_file(kIndex).value_or(""))) {
            const json j = json::parse(line);
            out.push_back({j.at(0).get<std::string>(), j.at(1).get<std::string>(), j.at(2).get<std::string>(),
                           j.at(3).get<std::string>(), j.at(4).get<std::string>(), id_of(j.at(5))});
        }
        return out;
    }();
    return table;
}

const Row* find(std::string_view name) {
    for (const auto& row : rows())
        if (row.name == name) return &row;
    const bool hex = name.size() >= 7 && name.size() <= 40 && std::all_of(name.begin(), name.end(), [](char c) {
                         return std::isxdigit(static_cast<unsigned char>(c)) != 0;
                     });
    if (!hex) return nullptr;
    std::string wanted(name);
    std::transform(wanted.begin(), wanted.end(), wanted.begin(),
                   [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); });
    const Row* found = nullptr;
    for (const auto& row : rows()) {
        if (!row.commit.starts_with(wanted)) continue;
        if (found) return nullptr;  // a prefix naming two commits names none
        found = &row;
    }
    return found;
}

json classes(const Row& row) {
    const json recipe = piece(row.recipe).at("classes");
    json out = json::object();
    out["commit"] = row.commit;
    out["package_version"] = recipe.at("package_version");
    out["recompute"] = nullptr;
    if (const json& r = recipe.at("recompute"); !r.is_null()) {
        json recompute = piece(id_of(r.at(0)));
        if (!r.at(1).is_null()) recompute["default_modules_line"] = r.at(1);
        if (!r.at(2).is_null()) recompute["labels_line"] = r.at(2);
        out["recompute"] = std::move(recompute);
    }
    json classes = json::object();
    for (const auto& c : recipe.at("classes")) {
        json head = piece(id_of(c.at(0)));
        json fields = json::object();
        for (const auto& [id, line] : items(c.at(2), 0)) {
            json spec = piece(id);
            const std::string name = spec.at("name").get<std::string>();
            spec.erase("name");
            spec["line"] = line;
            fields[name] = std::move(spec);
        }
        const std::string name = head.at("name").get<std::string>();
        head.erase("name");
        head["line"] = c.at(1);
        head["fields"] = std::move(fields);
        classes[name] = std::move(head);
    }
    out["classes"] = std::move(classes);
    return out;
}

json checks(const Row& row) {
    const json recipe = piece(row.recipe).at("checks");
    json functions = json::object();
    std::vector<std::string> names;
    std::vector<std::vector<json>> sites_of;  // per function, its sites in body order
    for (const auto& f : recipe.at("functions")) {
        json head = piece(id_of(f.at(0)));
        OwnedSites owned;
        json fn = head;
        fn["body"] = decode_block(f.at(1), 0, head, owned);
        const std::string name = head.at("name").get<std::string>();
        fn.erase("name");
        sites_of.push_back(std::move(owned));
        names.push_back(name);
        functions[name] = std::move(fn);
    }
    // Global site numbers: runs of so many sites of one function, in the order the compiler met them.
    json sites = json::array();
    std::vector<std::size_t> taken(names.size(), 0);
    std::vector<std::vector<json*>> statements(names.size());
    for (std::size_t i = 0; i < names.size(); ++i)
        statements_with_sites(functions.at(names[i]).at("body"), statements[i]);
    for (const auto& run : recipe.at("sites")) {
        const std::size_t f = id_of(run.at(0)), count = id_of(run.at(1));
        if (f >= names.size() || taken[f] + count > sites_of[f].size())
            throw std::runtime_error(fmt::format("schemas/{}: {}'s site runs overrun", kIndex, row.name));
        for (std::size_t k = 0; k < count; ++k, ++taken[f]) {
            (*statements[f][taken[f]])["site"] = sites.size();
            sites.push_back(std::move(sites_of[f][taken[f]]));
        }
    }
    for (std::size_t i = 0; i < names.size(); ++i)
        if (taken[i] != sites_of[i].size())
            throw std::runtime_error(
                fmt::format("schemas/{}: {}'s site runs miss sites of {}", kIndex, row.name, names[i]));
    json out = json::object();
    out["commit"] = row.commit;
    out["entries"] = piece(id_of(recipe.at("entries")));
    if (json enums = piece(id_of(recipe.at("enums"))); !enums.empty()) out["enums"] = std::move(enums);
    out["functions"] = std::move(functions);
    out["sites"] = std::move(sites);
    return out;
}

}  // namespace mbl::fact_store
