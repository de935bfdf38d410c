#pragma once
// The bookkeeping every heap object of the evaluator joins when it is made: a creation counter per thread (branch
// journals record only changes to objects older than the branch) and the registry of one evaluation's objects,
// which breaks their reference cycles when it ends.
#include <cstdint>
#include <unordered_set>

namespace mbl::py {

// Creation counter of the current thread: a branch journal only records changes to objects older than itself.
std::uint64_t next_epoch();
std::uint64_t current_epoch();

struct Object;

// The objects one recipe evaluation made (on its thread). Python values form cycles (a nested function and the scope
// that holds it, `self.parent = self`); when the evaluation ends, sweep() drops every reference they hold so that
// shared pointers free them.
class ObjectRegistry {
public:
    ObjectRegistry() = default;
    ~ObjectRegistry() { sweep(); }
    ObjectRegistry(const ObjectRegistry&) = delete;
    ObjectRegistry& operator=(const ObjectRegistry&) = delete;
    void sweep();
    // While a Use is alive, the objects made on this thread join the registry.
    struct Use {
        explicit Use(ObjectRegistry& r);
        ~Use();
        Use(const Use&) = delete;
        Use& operator=(const Use&) = delete;
        ObjectRegistry* saved;
    };

private:
    friend struct Object;
    std::unordered_set<Object*> live_;
};

}  // namespace mbl::py
