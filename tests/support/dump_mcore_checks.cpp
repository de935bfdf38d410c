// A development tool, not a test: compiles the __post_init__ checks of a Megatron Core tree (parser/bridge/
// mcore_checks.cpp, the route a tree on disk takes at lint time) and prints them in the layout of
// the compiled checks of schemas/mcore/facts/; scripts/mcore_facts.py --store writes the bundled store with it.
//   dump_mcore_checks TREE REVISION COMMIT   (REVISION: the bundled revision whose class list is read)
#include <iostream>
#include <nlohmann/json.hpp>

#include "core/post_init.hpp"
#include "core/schema.hpp"
#include "parser/bridge/mcore_source.hpp"

int main(int argc, char** argv) {
    if (argc != 4) {
        std::cerr << "usage: dump_mcore_checks TREE REVISION COMMIT\n";
        return 2;
    }
    const mbl::Revision* rev = mbl::Schema::instance().revision(argv[2]);
    if (!rev) {
        std::cerr << "unknown revision " << argv[2] << '\n';
        return 2;
    }
    std::string why;
    auto facts = mbl::py::read_mcore_classes(argv[1], *rev->classes, why);
    if (!facts || !facts->check_program()) {
        std::cerr << (why.empty() ? "no checks compiled" : why) << '\n';
        return 1;
    }
    auto program = *facts->check_program();
    program.commit = argv[3];
    std::cout << program.to_json().dump(0) << '\n';
    return 0;
}
