// A planted evaluator file that tests a class name the host should recognise (tests/CMakeLists.txt).
bool is_bridge(const char* name) { return name == std::string("AutoBridge"); }
