// core/file_text: the one reader of whole files. What a caller is told for each way a read can fail, and that a FIFO
// is refused at once instead of waiting for a writer.
#include <sys/stat.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <cerrno>
#include <csignal>
#include <fstream>
#include <thread>

#include "../support/temp_dir.hpp"
#include "core/file_text.hpp"

using mbl::FileText;
using mbl::test::TempDir;

TEST_CASE("a file is read whole, byte for byte", "[file_text]") {
    const TempDir d;
    std::string bytes;
    for (int i = 0; i < 200000; ++i) bytes += static_cast<char>(i % 251);  // NUL bytes and a size past one read
    d.write("big.py", bytes);
    d.write("empty.py", "");
    const FileText big = mbl::read_file_text(d / "big.py", 1 << 20);
    REQUIRE(big.text);
    CHECK(*big.text == bytes);
    CHECK(big.failure == FileText::Failure::None);
    const FileText empty = mbl::read_file_text(d / "empty.py", 1 << 20);
    REQUIRE(empty.text);
    CHECK(empty.text->empty());
}

TEST_CASE("each failure is named, with the size or errno the caller reports", "[file_text]") {
    const TempDir d;
    d.write("ten.py", "0123456789");
    const FileText limit = mbl::read_file_text(d / "ten.py", 10);
    CHECK(limit.text);  // at the limit is not above it
    const FileText over = mbl::read_file_text(d / "ten.py", 9);
    CHECK_FALSE(over.text);
    CHECK(over.failure == FileText::Failure::TooLarge);
    CHECK(over.size == 10);
    const FileText missing = mbl::read_file_text(d / "absent.py", 100);
    CHECK(missing.failure == FileText::Failure::CannotOpen);
    CHECK(missing.error_number == ENOENT);
    const FileText folder = mbl::read_file_text(d.path().string(), 100);
    CHECK(folder.failure == FileText::Failure::Directory);
}

TEST_CASE("a FIFO is refused at once, or read to its end when asked for", "[file_text]") {
    const TempDir d;
    const std::string fifo = d / "pipe.py";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    // No writer: a blocking open would wait for ever.
    const FileText refused = mbl::read_file_text(fifo, 100);
    CHECK(refused.failure == FileText::Failure::NotRegular);
    CHECK_FALSE(refused.text);
    std::thread writer([&] { std::ofstream(fifo) << "from a pipe\n"; });
    const FileText piped = mbl::read_file_text(fifo, 100, /*regular_only=*/false);
    writer.join();
    REQUIRE(piped.text);
    CHECK(*piped.text == "from a pipe\n");
}

TEST_CASE("a pipe that runs past the limit stops there", "[file_text]") {
    const TempDir d;
    const std::string fifo = d / "pipe.py";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    std::signal(SIGPIPE, SIG_IGN);  // the writer's last writes find the reader gone
    std::thread writer([&] {
        std::ofstream out(fifo);
        out << std::string(300000, 'x');  // stops early with a broken pipe once the reader has gone
    });
    const FileText read = mbl::read_file_text(fifo, 100000, /*regular_only=*/false);
    writer.join();
    CHECK(read.failure == FileText::Failure::TooLarge);
    CHECK(read.size > 100000);
}
