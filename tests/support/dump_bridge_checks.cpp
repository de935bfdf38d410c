// A development tool, not a test: compiles Megatron Bridge's comm-overlap start-up checks from a Bridge tree
// (parser/bridge/mcore_checks.cpp, the route a Bridge checkout takes at lint time) and prints them in the layout of
// schemas/bridge/checks.json; scripts/mcore_facts.py --bridge-checks writes the bundled file with it.
//   dump_bridge_checks SRC COMMIT   (SRC: the tree's src/ folder, holding megatron/bridge)
#include <iostream>
#include <nlohmann/json.hpp>

#include "core/post_init.hpp"
#include "parser/bridge/mcore_tree.hpp"

int main(int argc, char** argv) {
    if (argc != 3) {
        std::cerr << "usage: dump_bridge_checks SRC COMMIT\n";
        return 2;
    }
    mbl::py::TreeReader tree(argv[1]);
    std::string why;
    auto program = mbl::py::compile_bridge_section_setup(tree, "comm_overlap", argv[2], why);
    if (!program) {
        std::cerr << why << '\n';
        return 1;
    }
    std::cout << program->to_json().dump(0) << '\n';
    return 0;
}
