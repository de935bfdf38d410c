// The classes a dataclass of the root takes its fields from: its own bases in the root, and Megatron Core's config
// classes where a base is one of them (from the revision's class facts, core/config_classes.hpp), in Python's
// method resolution order. A provider built on Megatron Core's MLATransformerConfig gets that class's defaults
// (multi_latent_attention = True) as Python gives them.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <unordered_map>

#include "core/schema.hpp"
#include "pyeval/interpreter.hpp"

namespace mbl::py {

namespace {

const void* identity(const ChainClass& c) {
    return c.tree ? static_cast<const void*>(c.tree.get()) : static_cast<const void*>(c.mcore);
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
    const ClassFacts* facts = project_.revision().classes.get();
    auto bases = [&](const ChainClass& c) {
        std::vector<ChainClass> out;
        if (c.tree) {
            for (const auto& b : c.tree->bases) {
                if (b.is_obj(ObjKind::Class)) out.push_back({std::static_pointer_cast<ClassObj>(b.o), nullptr});
                else if (b.is_obj(ObjKind::External) && facts)
                    if (const ConfigClass* m = config_class_for_path(*facts, b.as<ExternalObj>()->path))
                        out.push_back({nullptr, m});
            }
        } else {
            for (const auto& name : c.mcore->bases)
                if (const ConfigClass* m = facts->find(name)) out.push_back({nullptr, m});
        }
        return out;
    };
    if (auto l = linearize({cls, nullptr}, bases, 0)) return *l;
    std::vector<ChainClass> out;  // bases Python would refuse: the root's own order, without Megatron Core's
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
        if (it->mcore)
            for (const auto& cf : it->mcore->fields) put({cf.name, nullptr, nullptr, &cf, it->mcore});
    }
    return out;
}

bool Interp::revision_supplies(const ConfigClass& owner) const {
    // TransformerConfig's own defaults (and its bases') are the revision's defaults, which the effective model and
    // model_default() supply for every model: an object need not carry them.
    const ClassFacts* facts = project_.revision().classes.get();
    return facts && facts->in_transformer_config_chain(owner);
}

std::optional<Attr> Interp::mcore_default(const ChainField& f, const SetInfo& made) const {
    const ClassFacts& facts = *project_.revision().classes;
    const ClassField& cf = *f.mcore;
    auto detail = std::make_shared<const std::string>(fmt::format("default of {}, Megatron Core {} ({})",
                                                                  f.mcore_owner->name, project_.revision().name,
                                                                  facts.where(*f.mcore_owner, cf.line)));
    SetInfo info{made.loc, made.chain, Origin::Default, std::move(detail)};
    if (cf.default_value) return Attr{cf.name, from_value(*cf.default_value, made.loc), std::move(info)};
    if (!cf.expr.empty()) return Attr{cf.name, Val::obj(std::make_shared<ExternalObj>(cf.expr), made.loc), info};
    return std::nullopt;
}

void Interp::add_mcore_defaults(InstanceObj& inst, const ConfigClass& cls, const SetInfo& made) const {
    const ClassFacts& facts = *project_.revision().classes;
    for (const ResolvedField& r : facts.fields_of(cls.name)) {
        if (revision_supplies(*r.owner) || inst.find(r.field->name)) continue;
        if (auto a = mcore_default({r.field->name, nullptr, nullptr, r.field, r.owner}, made))
            inst.attrs.push_back(std::move(*a));
    }
}

}  // namespace mbl::py
