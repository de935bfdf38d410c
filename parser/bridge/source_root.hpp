#pragma once
// Where a Bridge recipe's imports resolve from.
#include <string>

namespace mbl::py {

// The default --root for a file: the nearest parent holding src/megatron/bridge (a Megatron Bridge checkout), else
// the parent of the file's top-level package (pyeval's package_root).
std::string default_root(const std::string& file);

}  // namespace mbl::py
