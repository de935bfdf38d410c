#pragma once
// What a tree's shell launch scripts put on PYTHONPATH for the Python scripts they run, read without running them.
// Launchers set it in a few shapes: `export PYTHONPATH="$ROOT/src:${PYTHONPATH:-}"` with ROOT computed from
// the launcher's own location (`$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)`), or inline,
// `PYTHONPATH=$(dirname "$0")/lib python3 "$(dirname "$0")/train.py"`. Only what the text says for certain is kept:
// an entry that depends on the environment, on a working directory the launcher does not set, or on a command other
// than dirname/cd/pwd/realpath/readlink -f is left out, so a module only it would find stays unknown.
#include <string>
#include <string_view>
#include <vector>

namespace mbl::py {

struct LaunchedScript {
    std::string script;                   // absolute, normalized: the `.py` file the launcher runs
    std::vector<std::string> pythonpath;  // absolute, normalized folders, in PYTHONPATH's order
    int line = 0;                         // the launcher's line that runs it
};

// The Python scripts `launcher` (an absolute path; `text` is its content) runs by their path, each with the
// PYTHONPATH entries in effect for it. A script whose path is not known for certain is left out.
std::vector<LaunchedScript> scripts_launched_by(const std::string& launcher, std::string_view text);

}  // namespace mbl::py
