// The classes a dataclass of the root takes its fields from: its own bases in the root, and the classes from outside
// the root that the host describes by their fields (Host::described_class, core/config_classes.hpp), in Python's
// method resolution order. A class built on a described class gets that class's defaults as Python gives them.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <unordered_map>

#include "pyeval/interpreter.hpp"

namespace mbl::py {

namespace {

const void* identity(const ChainClass& c) {
    return c.tree ? static_cast<const void*>(c.tree.get()) : static_cast<const void*>(c.outside);
}

// C3 linearization over `bases`; nullopt when the bases admit none (Python raises TypeError there).
std::optional<std::vector<ChainClass>> linearize(const ChainClass& c,
                                                 const std::function<std::vector<ChainClass>(const ChainClass&)>& bases,
                                                 int depth) {
    if (depth > 50) return std::nullopt;
    std::vector<std::vector<ChainClass>> seqs;
    const std::vector<ChainClass> direct = bases(c);
    for (const auto& b : direct) {
        auto l = linearize(b, bases, depth + 1);
        if (!l) return std::nullopt;
        seqs.push_back(std::move(*l));
    }
    seqs.push_back(direct);
    std::vector<ChainClass> out{c};
    auto in_a_tail = [&](const void* id) {
        return std::any_of(seqs.begin(), seqs.end(), [&](const auto& s) {
            return std::any_of(s.begin() + 1, s.end(), [&](const ChainClass& x) { return identity(x) == id; });
        });
    };
    for (;;) {
        std::erase_if(seqs, [](const auto& s) { return s.empty(); });
        if (seqs.empty()) return out;
        const ChainClass* next = nullptr;
        for (const auto& s : seqs)
            if (!in_a_tail(identity(s.front()))) {
                next = &s.front();
                break;
            }
        if (!next) return std::nullopt;
        const ChainClass chosen = *next;
        out.push_back(chosen);
        for (auto& s : seqs)
            if (identity(s.front()) == identity(chosen)) s.erase(s.begin());
    }
}

}  // namespace

std::vector<ChainClass> Interp::field_chain(const std::shared_ptr<ClassObj>& cls) const {
    const Host& host = project_.host();
    auto bases = [&](const ChainClass& c) {
        std::vector<ChainClass> out;
        if (c.tree) {
            for (const auto& b : c.tree->bases) {
                if (b.is_obj(ObjKind::Class)) out.push_back({std::static_pointer_cast<ClassObj>(b.o), nullptr});
                else if (b.is_obj(ObjKind::External))
                    if (const ConfigClass* m = host.described_class(b.as<ExternalObj>()->path))
                        out.push_back({nullptr, m});
            }
        } else {
            for (const auto& name : c.outside->bases)
                if (const ConfigClass* m = host.described_base(name)) out.push_back({nullptr, m});
        }
        return out;
    };
    if (auto l = linearize({cls, nullptr}, bases, 0)) return *l;
    std::vector<ChainClass> out;  // bases Python would refuse: the root's own order, without the described classes
    for (const auto& c : mro(cls)) out.push_back({c, nullptr});
    return out;
}

std::vector<ChainField> Interp::chain_fields(const std::vector<ChainClass>& chain) const {
    // Base classes first; a redefinition keeps its base's position (the dataclass constructor's order).
    std::vector<ChainField> out;
    std::unordered_map<std::string, std::size_t> position;
    auto put = [&](ChainField f) {
        auto [at, added] = position.try_emplace(f.name, out.size());
        if (added) out.push_back(std::move(f));
        else out[at->second] = std::move(f);
    };
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
        if (it->tree && it->tree->dataclass)
            for (const auto& df : it->tree->fields) put({df.name, &df, it->tree.get(), nullptr, nullptr});
        if (it->outside)
            for (const auto& cf : it->outside->fields) put({cf.name, nullptr, nullptr, &cf, it->outside});
    }
    return out;
}

}  // namespace mbl::py
