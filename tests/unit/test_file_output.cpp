// Writing fixed files: atomic replacement, no lost concurrent edit, no write through a link, and the temporary files
// of a killed run recognised and removed by the next one.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "../support/temp_dir.hpp"
#include "engine/file_output.hpp"

namespace fs = std::filesystem;
using mbl::test::TempDir;

namespace {

std::string read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

std::size_t entries(const TempDir& dir) {
    return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()));
}

}  // namespace

TEST_CASE("a file changed since it was read is not overwritten", "[fix][write]") {
    TempDir dir;
    const std::string path = dir.write("cfg.yaml", "model:\n  recompute_granularity: full\n");
    const std::string read_then = read(path);
    // Another program saves the file while the linter works on the text it read.
    std::ofstream(path, std::ios::trunc) << "model:\n  recompute_granularity: selective  # edited meanwhile\n";
    std::string error;
    CHECK_FALSE(mbl::write_file_atomically(path, "fixed\n", &error, &read_then));
    CHECK(error == path + " changed on disk since mbridge-lint read it; its fixes are not written (run again)");
    CHECK(read(path) == "model:\n  recompute_granularity: selective  # edited meanwhile\n");
    CHECK(entries(dir) == 1);  // the temporary file is gone too

    // Unchanged since it was read: written, permission bits kept.
    ::chmod(path.c_str(), 0640);
    const std::string now = read(path);
    REQUIRE(mbl::write_file_atomically(path, "fixed\n", &error, &now));
    CHECK(read(path) == "fixed\n");
    struct stat st {};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0640);
    CHECK(entries(dir) == 1);
}

TEST_CASE("fixes are never written through a symbolic link", "[fix][write]") {
    TempDir dir;
    const std::string target = dir.write("real.yaml", "original\n");
    const std::string link = (dir.path() / "link.yaml").string();
    fs::create_symlink(target, link);
    std::string error;
    CHECK_FALSE(mbl::write_file_atomically(link, "fixed\n", &error));
    CHECK(error == "not writing fixes to " + link + ": it is a symbolic link");
    CHECK(read(target) == "original\n");
    CHECK(fs::is_symlink(link));
}

TEST_CASE("temporary files of a killed run are removed, those of a live one kept", "[fix][write]") {
    TempDir dir;
    // pid_max is at most 2^22 on Linux: no process has this id.
    const std::string gone = dir.write(".cfg.yaml.mbridge-lint-2147483646-AbC123", "half\n");
    const std::string live = dir.write(".cfg.yaml.mbridge-lint-" + std::to_string(::getppid()) + "-AbC123", "x\n");
    const std::string mine = dir.write(".cfg.yaml.mbridge-lint-" + std::to_string(::getpid()) + "-AbC123", "x\n");
    const std::string other = dir.write(".cfg.yaml.mbridge-lint-notapid-AbC123", "x\n");
    const std::string short_suffix = dir.write(".cfg.yaml.mbridge-lint-2147483646-AbC", "x\n");
    const auto removed = mbl::remove_stale_temporaries(dir.path().string());
    REQUIRE(removed.size() == 1);
    CHECK(fs::path(removed[0]).filename() == ".cfg.yaml.mbridge-lint-2147483646-AbC123");
    CHECK_FALSE(fs::exists(gone));
    for (const auto& kept : {live, mine, other, short_suffix}) CHECK(fs::exists(kept));
}
