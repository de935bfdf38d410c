#include "parser/front_end.hpp"

namespace mbl {

std::unique_ptr<FrontEnd> make_yaml_front_end();
std::unique_ptr<FrontEnd> make_python_front_end();

static std::vector<std::unique_ptr<FrontEnd>>& registry() {
    static std::vector<std::unique_ptr<FrontEnd>> list = [] {
        std::vector<std::unique_ptr<FrontEnd>> v;
        v.push_back(make_yaml_front_end());
        v.push_back(make_python_front_end());
        return v;
    }();
    return list;
}

const std::vector<std::unique_ptr<FrontEnd>>& front_ends() { return registry(); }

void register_front_end(std::unique_ptr<FrontEnd> front_end) {
    registry().insert(registry().begin(), std::move(front_end));
}

const FrontEnd* front_end_for(std::string_view path) {
    for (const auto& f : registry())
        if (f->handles(path)) return f.get();
    return nullptr;
}

}  // namespace mbl
