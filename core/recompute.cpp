#include "core/recompute.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <sstream>
#include <stdexcept>

namespace mbl {

Recompute Recompute::selective(std::vector<std::string> labels) {
    Recompute r;
    r.granularity = Granularity::Selective;
    r.modules = std::move(labels);
    return r;
}

Recompute Recompute::full(Method method, int num_layers) {
    Recompute r;
    r.granularity = Granularity::Full;
    r.method = method;
    r.num_layers = num_layers;
    return r;
}

bool Recompute::has(const std::string& label) const {
    return granularity == Granularity::Selective && std::find(modules.begin(), modules.end(), label) != modules.end();
}

std::string Recompute::describe() const {
    switch (granularity) {
        case Granularity::None: return "none";
        case Granularity::Selective: return fmt::format("selective [{}]", fmt::join(modules, ", "));
        case Granularity::Full:
            return fmt::format("full {} {}{}", method == Method::Uniform ? "uniform" : "block", num_layers,
                               distribute_saved_activations ? " distributed" : "");
    }
    return "none";
}

Recompute parse_recompute(const std::string& text) {
    std::string s;
    for (char c : text) s += (c == ',' || c == '[' || c == ']') ? ' ' : c;
    std::istringstream in(s);
    std::vector<std::string> words;
    for (std::string w; in >> w;) words.push_back(w);
    auto bad = [&](const std::string& why) {
        return std::invalid_argument(fmt::format("\"{}\": {} (write none, \"selective [a, b]\", \"full uniform 1\" or "
                                                 "\"full block 2\")",
                                                 text, why));
    };
    if (words.empty()) throw bad("empty recompute option");
    if (words[0] == "none" && words.size() == 1) return Recompute::none();
    if (words[0] == "selective") {
        std::vector<std::string> labels(words.begin() + 1, words.end());
        for (auto& l : labels)
            for (char c : l)
                if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
                    throw bad("\"" + l + "\" is not a label");
        return Recompute::selective(labels);
    }
    if (words[0] == "full") {
        if (words.size() != 3 || (words[1] != "uniform" && words[1] != "block"))
            throw bad("full needs a method and a layer count");
        int k = 0;
        try {
            k = std::stoi(words[2]);
        } catch (...) {
            throw bad("\"" + words[2] + "\" is not a layer count");
        }
        if (k < 1) throw bad("the layer count must be at least 1");
        return Recompute::full(words[1] == "uniform" ? Recompute::Method::Uniform : Recompute::Method::Block, k);
    }
    throw bad("unknown granularity \"" + words[0] + "\"");
}

}  // namespace mbl
