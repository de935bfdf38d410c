// The answers of a host that knows nothing beyond the source root.
#include "pyeval/host.hpp"

#include <fmt/format.h>

#include "pyeval/values.hpp"

namespace mbl::py {

Val Host::call_host_function(Interp&, Frame&, BuiltinObj& fn, CallArgs&, Loc site) {
    return Val::unknown(fmt::format("{}() is not modelled", fn.name), site);
}

const std::vector<std::string>& Host::default_names() const {
    static const std::vector<std::string> none;
    return none;
}

}  // namespace mbl::py
