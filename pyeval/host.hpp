#pragma once
// What the evaluator asks of the program that embeds it. The evaluator models Python and its standard library; what a
// library outside the source root does at run time (reading files, registries, its own defaults) is the host's
// knowledge. The evaluator calls a Host at the few points where that knowledge enters; the defaults here answer as
// plain Python with nothing known beyond the source root. One Host serves every thread of a Project: it must be
// thread-safe.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/config_classes.hpp"
#include "pyeval/ast.hpp"
#include "pyeval/values.hpp"

namespace mbl::py {

class Interp;
struct Frame;
struct CallArgs;

class Host {
public:
    virtual ~Host() = default;

    // --- calls ---
    // A call the host answers itself, before the evaluator's own modelling: `callee` is a name from outside the
    // source root (External) or a class of the tree (Class). nullopt: the evaluator goes on.
    virtual std::optional<Val> intercept_call(Interp&, Frame&, const Val& /*callee*/, CallArgs&, Loc /*site*/) {
        return std::nullopt;
    }
    // A call of a function the host made (a BuiltinObj with id Builtin::Host; its host_op is the host's own).
    virtual Val call_host_function(Interp&, Frame&, BuiltinObj& fn, CallArgs&, Loc site);

    // --- attributes ---
    // An attribute the host provides: of a class of the tree or an outside name (asked before the evaluator looks),
    // of an instance (asked when the evaluator finds none), of a HostObj (the only lookup). nullopt: none.
    virtual std::optional<Val> attr(Interp&, const Val& /*obj*/, const std::string& /*name*/, Loc /*at*/) {
        return std::nullopt;
    }
    // A value about to be stored as attribute `name` of an instance (the host may mark it).
    virtual void attr_stored(const std::string& /*name*/, Val& /*value*/) {}

    // --- instances that take defaults ---
    // Whether instances of a class of this name (or with a base of this name) take the host's defaults for the
    // attributes they do not set (InstanceObj::takes_defaults).
    virtual bool defaults_class(std::string_view /*class_name*/) const { return false; }
    // Such an instance's default for an attribute it does not set; nullopt when there is none.
    virtual std::optional<Val> attr_default(const std::string& /*name*/) const { return std::nullopt; }
    // The fields such an instance has, sorted (what dataclasses.fields lists for a class built on an outside one).
    virtual const std::vector<std::string>& default_names() const;

    // --- dataclasses from outside the source root, described by their fields ---
    // The described class a dotted name from outside the source root stands for (a base class, a class called);
    // nullptr when the host does not describe it.
    virtual const ConfigClass* described_class(std::string_view /*dotted*/) const { return nullptr; }
    // A base of a described class, by the name its description gives.
    virtual const ConfigClass* described_base(std::string_view /*name*/) const { return nullptr; }
    // The default of a described field, as the attribute an object made at `made` holds; nullopt when the object
    // need not hold it (attr_default answers it) or it has none.
    virtual std::optional<Attr> described_default(const ConfigClass& /*owner*/, const ClassField& /*field*/,
                                                  const SetInfo& /*made*/) const {
        return std::nullopt;
    }
    // Adds the defaults an instance of the described class `cls` holds when an outside class is called.
    virtual void add_described_defaults(InstanceObj& /*inst*/, const ConfigClass& /*cls*/) const {}

    // --- definitions ---
    // A class was defined with decorators (`decorated`: the decorated_definition node in f's module); called before
    // its name is bound, so that the host may add class attributes its decorators store.
    virtual void class_decorated(Interp&, Frame&, ClassObj& /*cls*/, NodeId /*decorated*/) {}
};

}  // namespace mbl::py
