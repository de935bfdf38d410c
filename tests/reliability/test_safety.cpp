// Linting untrusted recipes has no effects: code that would write files, spawn processes, open sockets or delete
// things if it ran leaves no trace, and the linter itself writes nothing except with --fix (only the files it
// reports, atomically) and the output paths the user names. The binary runs under strace, which records every
// process it starts, every socket it opens and every file it opens for writing.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "../support/run.hpp"
#include "../support/temp_dir.hpp"

namespace fs = std::filesystem;
using mbl::test::TempDir;

namespace {

// Every file under `root`: path -> contents (and the modification time, to catch rewrites of equal text).
std::map<std::string, std::string> snapshot(const fs::path& root) {
    std::map<std::string, std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(root)) {
        if (!e.is_regular_file()) continue;
        std::ifstream in(e.path(), std::ios::binary);
        std::ostringstream text;
        text << in.rdbuf();
        const auto stamp = fs::last_write_time(e.path()).time_since_epoch().count();
        out[fs::relative(e.path(), root).string()] = text.str() + "\n@mtime " + std::to_string(stamp);
    }
    return out;
}

// A TCP listener on a free local port; accepted() says whether anything connected.
class Listener {
public:
    Listener() {
        fd_ = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
        listen(fd_, 8);
        socklen_t len = sizeof addr;
        getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
        port_ = ntohs(addr.sin_port);
    }
    ~Listener() { close(fd_); }
    int port() const { return port_; }
    bool accepted() const {
        const int c = accept(fd_, nullptr, nullptr);
        if (c >= 0) close(c);
        return c >= 0;
    }

private:
    int fd_ = -1;
    int port_ = 0;
};

// A recipe tree whose every module would do damage if imported or run.
void write_hostile_tree(const TempDir& dir, int port, const std::string& victim) {
    const std::string attack = "import os, socket, subprocess, shutil, pathlib, importlib\n"
                               "open('MARKER_open', 'w').write('ran')\n"
                               "pathlib.Path('MARKER_pathlib').write_text('ran')\n"
                               "os.system('touch MARKER_system')\n"
                               "subprocess.run(['touch', 'MARKER_subprocess'])\n"
                               "os.makedirs('MARKER_dir')\n"
                               "shutil.rmtree('" +
                               victim +
                               "')\n"
                               "socket.create_connection(('127.0.0.1', " +
                               std::to_string(port) +
                               "))\n"
                               "exec(\"open('MARKER_exec', 'w')\")\n"
                               "eval(\"__import__('os').system('touch MARKER_eval')\")\n"
                               "importlib.import_module('os').remove('recipes/hostile.py')\n";
    dir.write("recipes/__init__.py", attack);
    dir.write("recipes/helpers.py", attack + "\n\ndef base():\n    " + "os.system('touch MARKER_helper')\n" +
                                        "    cfg = ConfigContainer()\n    return cfg\n");
    dir.write(
        "recipes/hostile.py",
        attack +
            "from megatron.bridge.training.config import ConfigContainer\n"
            "from megatron.bridge.models import GPTModelProvider\n"
            "from recipes.helpers import base\n\n\n"
            "def hostile_config() -> ConfigContainer:\n"
            "    os.system('touch MARKER_recipe')\n"
            "    subprocess.Popen(['sh', '-c', 'touch MARKER_popen'])\n"
            "    with open('MARKER_with', 'w') as f:\n        f.write('ran')\n"
            "    cfg = ConfigContainer(model=GPTModelProvider(num_layers=4))\n"
            "    cfg.model.recompute_granularity = 'selective'\n"
            "    cfg.model.recompute_method = 'uniform'  # RC108: ignored under selective; the safe fix deletes it\n"
            "    return cfg\n");
    dir.write("configs/run.yaml", "model:\n  recompute_granularity: selective\n  recompute_method: uniform\n");
}

struct Traced {
    mbl::test::RunResult run;
    std::string trace;
};

// Runs the linter in `dir` under strace (processes, sockets, files opened for writing or created).
Traced traced(const TempDir& dir, const std::string& args) {
    const std::string trace_file = (dir.path() / ".." / (dir.path().filename().string() + ".strace")).string();
    // LeakSanitizer (sanitizer builds) cannot run under a tracer; leaks are checked by every other test.
    auto r = mbl::test::run_shell(
        "cd " + dir.path().string() + " && ASAN_OPTIONS=detect_leaks=0 strace -f -qq -o " + trace_file +
        " -e trace=execve,fork,vfork,socket,connect,unlink,unlinkat,rename,renameat,renameat2,"
        "mkdir,mkdirat,openat,open,creat -e status=!failed " +
        mbl::test::lint_binary() + " " + args);
    std::ifstream in(trace_file);
    std::ostringstream text;
    text << in.rdbuf();
    fs::remove(trace_file);
    return {r, text.str()};
}

// The trace's lines that change the world: new processes beyond the linter itself, sockets, writes, deletions.
std::vector<std::string> effects(const std::string& trace) {
    std::vector<std::string> out;
    std::istringstream lines(trace);
    std::string line;
    int execs = 0;
    while (std::getline(lines, line)) {
        const bool write_open = (line.find("open") != std::string::npos) &&
                                (line.find("O_WRONLY") != std::string::npos ||
                                 line.find("O_RDWR") != std::string::npos || line.find("O_CREAT") != std::string::npos);
        if (line.find("execve(") != std::string::npos && ++execs == 1) continue;  // the linter itself
        if (line.find("execve(") != std::string::npos || line.find("fork(") != std::string::npos ||
            line.find("socket(") != std::string::npos || line.find("connect(") != std::string::npos ||
            line.find("unlink") != std::string::npos || line.find("rename") != std::string::npos ||
            line.find("mkdir") != std::string::npos || line.find("creat(") != std::string::npos || write_open)
            out.push_back(line);
    }
    return out;
}

}  // namespace

TEST_CASE("linting a hostile recipe tree has no effects at all", "[safety]") {
    TempDir dir, victim_dir;
    const std::string victim = victim_dir.write("keep/me.txt", "precious");
    Listener listener;
    write_hostile_tree(dir, listener.port(), victim_dir / "keep");
    const auto before = snapshot(dir.path());

    for (const char* args :
         {"check recipes configs", "check --format sarif recipes", "check --diff recipes",
          "check --show-unknowns -j 4 recipes/hostile.py::hostile_config", "show recipes/hostile.py::hostile_config",
          "estimate recipes/hostile.py::hostile_config"}) {
        INFO(args);
        Traced t = traced(dir, args);
        INFO(t.run.out.substr(0, 3000));
        CHECK(t.run.code >= 0);
        CHECK(t.run.code <= 2);
        CHECK_FALSE(t.trace.empty());  // strace ran
        const auto found = effects(t.trace);
        for (const auto& e : found) FAIL_CHECK("side effect: " << e);
    }
    CHECK(snapshot(dir.path()) == before);  // nothing written, created, deleted or touched
    CHECK(fs::exists(victim));
    CHECK_FALSE(listener.accepted());
}

TEST_CASE("check --fix writes only the files it reports, atomically, and --output only the path given", "[safety]") {
    TempDir dir, victim_dir;
    Listener listener;
    write_hostile_tree(dir, listener.port(), victim_dir / "keep");
    const auto before = snapshot(dir.path());

    Traced fixed = traced(dir, "check --fix recipes");
    INFO(fixed.run.out);
    CHECK(fixed.run.out.find("fixed 1 problem") != std::string::npos);
    const auto after = snapshot(dir.path());
    std::vector<std::string> changed;
    for (const auto& [file, text] : after)
        if (!before.count(file) || before.at(file) != text) changed.push_back(file);
    for (const auto& [file, text] : before)
        if (!after.count(file)) changed.push_back(file);
    CHECK(changed == std::vector<std::string>{"recipes/hostile.py"});
    // The only writes: a temporary file beside the fixed one, renamed over it (atomic replace).
    std::vector<std::string> writes = effects(fixed.trace);
    REQUIRE(writes.size() >= 2);
    for (const auto& w : writes) {
        INFO(w);
        CHECK(w.find("recipes/.hostile.py.mbridge-lint-") != std::string::npos);
    }
    CHECK(writes.back().find("rename") != std::string::npos);

    const auto before_output = snapshot(dir.path());
    Traced report = traced(dir, "check --format sarif --output report.sarif recipes");
    const auto after_output = snapshot(dir.path());
    CHECK(after_output.size() == before_output.size() + 1);
    CHECK(after_output.count("report.sarif") == 1);
    for (const auto& w : effects(report.trace)) {
        INFO(w);
        CHECK(w.find("report.sarif") != std::string::npos);
    }
    CHECK_FALSE(listener.accepted());
}
