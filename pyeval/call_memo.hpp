#pragma once
// Calls a host makes on behalf of many recipes with the same inputs (the object a library builds for a model name):
// evaluated once, in an evaluator of their own, then copied into each evaluation that makes the call and
// re-hung below its call chain and call site. What the copy holds is what the call would have made there: the same
// values, the same provenance (set where, via which calls), the same private copies of module globals.
//
// A call is answered from the memo only where that is exact. It is evaluated directly (as without the memo) when its
// evaluation reported a diagnostic, made a function, class or host object of its own, or reached a limit that the
// calling evaluation is nearer to (steps, nested expressions); when the caller has already copied a module global
// that the call copies too (the call would read the caller's copy); when the caller runs a module's top level; and
// when the caller is inside a branch and the call copies module globals (the branch would record changes to them).
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "pyeval/interpreter.hpp"
#include "pyeval/object_registry.hpp"

namespace mbl::py {

class CallMemo {
public:
    // What a call computes from (interp, frame, site): the frame's chain and the site are stand-ins that the copies
    // replace. nullopt is an answer too (remembered like a value).
    using Body = std::function<std::optional<Val>(Interp&, Frame&, Loc)>;

    // The call's answer for the evaluation `in` at frame `f` and call site `site`: from the memo under `key`, or
    // made by `body` right there. `key` must name everything the answer depends on besides the source root.
    std::optional<Val> call(Interp& in, Frame& f, Loc site, const std::string& key, const Body& body);

    struct Counts {
        std::size_t evaluated = 0;  // calls evaluated into the memo
        std::size_t copied = 0;     // calls answered with a copy
        std::size_t direct = 0;     // calls evaluated where they were made
    };
    Counts counts() const;

private:
    struct Entry;
    std::shared_ptr<Entry> evaluate(Interp& in, const Frame& f, const Body& body);

    mutable std::mutex mutex_;
    std::map<std::string, std::shared_ptr<Entry>> entries_;  // null while one thread evaluates it
    Counts counts_;
};

}  // namespace mbl::py
