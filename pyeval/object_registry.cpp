// Objects joining and leaving the registry of their evaluation, the sweep that frees cycles, and the creation counter
// (see object_registry.hpp).
#include "pyeval/object_registry.hpp"

#include "pyeval/values.hpp"

namespace mbl::py {

namespace {
thread_local std::uint64_t tls_epoch = 0;
thread_local ObjectRegistry* tls_registry = nullptr;
}  // namespace

std::uint64_t next_epoch() { return ++tls_epoch; }
std::uint64_t current_epoch() { return tls_epoch; }

Object::Object(ObjKind k) : kind(k), epoch(next_epoch()), registry(tls_registry) {
    if (registry) registry->live_.insert(this);
}

Object::~Object() {
    if (registry) registry->live_.erase(this);
}

void ObjectRegistry::sweep() {
    while (!live_.empty()) {
        Object* p = *live_.begin();
        live_.erase(live_.begin());
        p->registry = nullptr;
        ObjPtr keep = p->weak_from_this().lock();
        if (keep) keep->clear_refs();  // may free others, which leave live_ themselves
    }
}

ObjectRegistry::Use::Use(ObjectRegistry& r) : saved(tls_registry) { tls_registry = &r; }
ObjectRegistry::Use::~Use() { tls_registry = saved; }

}  // namespace mbl::py
