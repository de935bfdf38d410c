// A development tool, not a test: compiles Megatron Bridge's comm-overlap start-up checks from a Bridge tree
// (parser/bridge/mcore_checks.cpp, the route a Bridge checkout takes at lint time) and prints them in the layout of
// schemas/bridge/checks.json; scripts/mcore_facts.py --bridge-checks writes the bundled file with it.
//   dump_bridge_checks SRC COMMIT [MCORE]   (SRC: the tree's src/ folder, holding megatron/bridge; MCORE: the folder
//   holding the megatron/core the tree pins, for the config classes Bridge derives from Megatron Core's)
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/post_init.hpp"
#include "parser/bridge/mcore_tree.hpp"

int main(int argc, char** argv) {
    if (argc != 3 && argc != 4) {
        std::cerr << "usage: dump_bridge_checks SRC COMMIT [MCORE]\n";
        return 2;
    }
    mbl::py::TreeReader tree(argv[1]);
    std::string why;
    std::optional<mbl::py::TreeReader> mcore;
    if (argc == 4) mcore.emplace(argv[3]);
    auto program = mbl::py::compile_bridge_startup(tree, argv[2], why, mcore ? &*mcore : nullptr);
    if (!program) {
        std::cerr << why << '\n';
        return 1;
    }
    std::cout << program->to_json().dump(0) << '\n';
    return 0;
}
