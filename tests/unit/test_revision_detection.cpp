// Revision detection (core/revision_detection): the revision a Megatron Bridge checkout pins, read from the files
// git writes. The checkouts are built here with git in a temporary directory; the commits are the ones the
// revision schemas record (and one they do not).
#include <catch2/catch.hpp>

#include "../support/run.hpp"
#include "../support/temp_dir.hpp"
#include "core/revision_detection.hpp"
#include "core/schema.hpp"

namespace {

using mbl::RevisionChoice;
using mbl::RevisionDetector;
using mbl::test::TempDir;

const std::string kMainPin = "2a75ac12c54ba6a42b34024756820bf819a2e25f";  // 0.20.dev
const std::string kDevPin = "b3b1e2d793c596c2fa61076d001ab93f294e4e87";   // dev
const std::string kUnknown = "0123456789abcdef0123456789abcdef01234567";
const std::string kGit = "git -c user.name=t -c user.email=t@example.org -c init.defaultBranch=main ";

int sh(const TempDir& dir, const std::string& command) {
    return mbl::test::run_shell("cd '" + dir.path().string() + "' && " + command).code;
}

// A Bridge-shaped checkout whose HEAD commit records `gitlink` for 3rdparty/Megatron-LM (not checked out).
void make_checkout(const TempDir& dir, const std::string& gitlink, int index_version = 2) {
    dir.write("src/megatron/bridge/recipes/llama.py", "def llama_config():\n    pass\n");
    dir.write(".gitmodules", "[submodule \"3rdparty/Megatron-LM\"]\n\tpath = 3rdparty/Megatron-LM\n");
    std::filesystem::create_directories(dir.path() / "3rdparty" / "Megatron-LM");
    REQUIRE(sh(dir, kGit + "init -q && " + kGit + "add -A && " + kGit + "update-index --add --cacheinfo 160000," +
                        gitlink + ",3rdparty/Megatron-LM && " + kGit + "update-index --index-version " +
                        std::to_string(index_version) + " && " + kGit + "commit -qm pin") == 0);
    // The gitlink is really there, as git itself reports it.
    CHECK(mbl::test::run_shell("cd '" + dir.path().string() + "' && git ls-tree HEAD 3rdparty/Megatron-LM")
              .out.find(gitlink) != std::string::npos);
}

// What `git submodule update` leaves: a .git file pointing into the superproject's modules/, HEAD detached there.
void check_out_submodule(const TempDir& dir, const std::string& head) {
    dir.write("3rdparty/Megatron-LM/.git", "gitdir: ../../.git/modules/3rdparty/Megatron-LM\n");
    dir.write(".git/modules/3rdparty/Megatron-LM/HEAD", head + "\n");
}

RevisionChoice detect(const TempDir& dir) {
    RevisionDetector detector;
    auto choice = detector.detect((dir.path() / "src/megatron/bridge/recipes/llama.py").string());
    REQUIRE(choice);
    return *choice;
}

}  // namespace

TEST_CASE("a Bridge checkout is linted for the commit its 3rdparty/Megatron-LM gitlink records", "[detection]") {
    for (int version : {2, 3, 4}) {
        TempDir dir;
        make_checkout(dir, kMainPin, version);
        const RevisionChoice c = detect(dir);
        CHECK(c.source == RevisionChoice::Source::Detected);
        CHECK(c.revision->name == "0.20.dev");
        CHECK(c.commit == kMainPin);
        CHECK(c.checkout == dir.path().string());
        CHECK(c.reason.find("gitlink pins 2a75ac12c54b") != std::string::npos);
        CHECK(c.reason.find("not checked out") != std::string::npos);
    }
}

TEST_CASE("a checked-out submodule wins over the gitlink: it is the code the job imports", "[detection]") {
    TempDir dir;
    make_checkout(dir, kMainPin);
    check_out_submodule(dir, kDevPin);  // scripts/switch_mcore.sh dev
    RevisionChoice c = detect(dir);
    CHECK(c.revision->name == "dev");
    CHECK(c.commit == kDevPin);
    CHECK(c.reason.find("checked out at b3b1e2d793c5") != std::string::npos);
    CHECK(c.reason.find("committed gitlink pins 2a75ac12c54b") != std::string::npos);

    // A branch checked out in the submodule: HEAD names a ref, resolved through packed-refs.
    dir.write(".git/modules/3rdparty/Megatron-LM/HEAD", "ref: refs/heads/dev\n");
    dir.write(".git/modules/3rdparty/Megatron-LM/packed-refs",
              "# pack-refs with: peeled\n" + kDevPin + " refs/heads/dev\n");
    CHECK(detect(dir).revision->name == "dev");
    // A loose ref wins over packed-refs, as in git.
    dir.write(".git/modules/3rdparty/Megatron-LM/refs/heads/dev", kMainPin + "\n");
    CHECK(detect(dir).revision->name == "0.20.dev");
}

TEST_CASE("without git data, .main.commit names the pinned commit", "[detection]") {
    TempDir dir;  // a source tarball: no .git, no submodule
    dir.write("src/megatron/bridge/recipes/llama.py", "def llama_config():\n    pass\n");
    dir.write(".main.commit", kMainPin + "\n");
    dir.write(".dev.commit", kDevPin + "\n");  // only switch_mcore.sh reads it; it does not decide
    const RevisionChoice c = detect(dir);
    CHECK(c.revision->name == "0.20.dev");
    CHECK(c.reason.find(".main.commit names 2a75ac12c54b") != std::string::npos);
}

TEST_CASE("an unknown pinned commit is said plainly, and the next known pin or the newest revision is used",
          "[detection]") {
    SECTION("the gitlink is unknown, .main.commit is known") {
        TempDir dir;
        make_checkout(dir, kUnknown);
        dir.write(".main.commit", kMainPin + "\n");
        const RevisionChoice c = detect(dir);
        CHECK(c.revision->name == "0.20.dev");
        CHECK(c.commit == kUnknown);
        CHECK(c.reason == "its 3rdparty/Megatron-LM gitlink pins 0123456789ab, a commit mbridge-lint knows no revision "
                          "for; its .main.commit names 2a75ac12c54b (0.20.dev), so that revision is used");
    }
    SECTION("nothing is known: taken as newer than every commit the table lists") {
        TempDir dir;
        make_checkout(dir, kUnknown);
        const RevisionChoice c = detect(dir);
        CHECK(c.revision->name == mbl::Schema::instance().newest_main_commit().nearest->name);
        CHECK(c.reason.find("0123456789ab, a commit mbridge-lint knows no revision for; it is not among the "
                            "Megatron-LM commits mbridge-lint lists") != std::string::npos);
        CHECK(mbl::detection_note(c).rfind("Megatron Core " + c.revision->name + " for files in " + dir.path().string(),
                                           0) == 0);
    }
}

TEST_CASE("release tags map to their release, a patch release to its own facts", "[detection]") {
    TempDir dir;
    make_checkout(dir, "512da5deb1fdc6ad8135bd07c6277628c4009261");  // core_v0.15.1
    const RevisionChoice c = detect(dir);
    CHECK(c.revision->name == "core_v0.15.1");
    CHECK_FALSE(c.approximate);
    TempDir release;
    make_checkout(release, "0d7e02bd26d3eb347ad8d1bef625002babfa6df7");  // core_v0.15.0
    CHECK(detect(release).revision->name == "0.15");
}

// The shape of a uv.lock as uv writes it (a Bridge checkout of September 2025 installing megatron-core from PyPI).
const char* kLockFromIndex = R"([[package]]
name = "megatron-bridge"
source = { editable = "." }
dependencies = [
    { name = "megatron-core", extra = ["dev", "mlm"] },
]

[package.metadata]
requires-dist = [
    { name = "megatron-core", extras = ["dev", "mlm"], specifier = ">=0.14.0a0,<0.16.0" },
]

[[package]]
name = "megatron-core"
version = "0.15.0rc6"
source = { registry = "https://pypi.org/simple" }
dependencies = [
    { name = "numpy" },
]
)";

TEST_CASE("a checkout installing megatron-core from a package index is linted for the version its uv.lock locks",
          "[detection]") {
    CHECK(mbl::uv_lock_mcore_version(kLockFromIndex) == "0.15.0rc6");
    // From the submodule (editable or path): no version pin; the gitlink or checkout names the commit.
    CHECK_FALSE(mbl::uv_lock_mcore_version(
        "[[package]]\nname = \"megatron-core\"\nversion = \"0.16.0rc0\"\nsource = { editable = "
        "\"3rdparty/Megatron-LM\" }\n"));
    CHECK_FALSE(mbl::uv_lock_mcore_version("[[package]]\nname = \"numpy\"\nversion = \"2.0.0\"\n"));

    TempDir dir;
    dir.write("src/megatron/bridge/recipes/llama.py", "def llama_config():\n    pass\n");
    dir.write("uv.lock", kLockFromIndex);
    const RevisionChoice c = detect(dir);
    CHECK(c.source == RevisionChoice::Source::Detected);
    CHECK(c.revision->name == "core_v0.15.0rc6");
    CHECK_FALSE(c.approximate);
    CHECK(c.reason.find("uv.lock locks megatron-core 0.15.0rc6") != std::string::npos);

    // A gitlink names the commit the job builds from: it wins over a version uv.lock still holds.
    TempDir both;
    both.write("uv.lock", kLockFromIndex);
    make_checkout(both, kMainPin);
    CHECK(detect(both).revision->name == "0.20.dev");
}

TEST_CASE("files outside a Bridge checkout are not detected, and each checkout is read once", "[detection]") {
    TempDir dir;
    dir.write("configs/run.yaml", "model: {}\n");
    RevisionDetector detector;
    CHECK_FALSE(detector.detect((dir.path() / "configs/run.yaml").string()));
    CHECK_FALSE(detector.detect("<override 1>"));

    // A Bridge source tree that pins nothing is a checkout only when it has a 3rdparty/Megatron-LM or .main.commit.
    TempDir bare;
    bare.write("src/megatron/bridge/x.py", "\n");
    CHECK_FALSE(detector.detect((bare.path() / "src/megatron/bridge/x.py").string()));

    TempDir bridge;
    make_checkout(bridge, kMainPin);
    const std::string file = (bridge.path() / "src/megatron/bridge/recipes/llama.py").string();
    CHECK(detector.detect(file)->revision->name == "0.20.dev");
    // Cached per checkout: a pin changed afterwards is not re-read by the same detector (a run sees one state).
    check_out_submodule(bridge, kDevPin);
    CHECK(detector.detect(file)->revision->name == "0.20.dev");
    CHECK(RevisionDetector().detect(file)->revision->name == "dev");
}

TEST_CASE("the index reader refuses what it cannot read instead of guessing", "[detection]") {
    CHECK_FALSE(mbl::index_gitlink("", "3rdparty/Megatron-LM"));
    CHECK_FALSE(mbl::index_gitlink(std::string("DIRC\0\0\0\x09\0\0\0\x01", 12), "3rdparty/Megatron-LM"));  // version 9
    std::string truncated("DIRC\0\0\0\x02\0\0\0\x05", 12);
    truncated += std::string(30, '\0');
    CHECK_FALSE(mbl::index_gitlink(truncated, "3rdparty/Megatron-LM"));

    TempDir dir;
    make_checkout(dir, kMainPin);
    const std::string index = mbl::test::read_file((dir.path() / ".git/index").string());
    CHECK(mbl::index_gitlink(index, "3rdparty/Megatron-LM") == kMainPin);
    CHECK_FALSE(mbl::index_gitlink(index, "src/megatron/bridge/recipes/llama.py"));  // a file, not a gitlink
    CHECK_FALSE(mbl::index_gitlink(index, "3rdparty/Other"));
    for (std::size_t cut = 12; cut < index.size(); cut += 7)
        CHECK_FALSE(mbl::index_gitlink(index.substr(0, cut), "zzz"));
}

TEST_CASE("an unknown commit takes the nearest known revision by release order, when the history tells",
          "[detection]") {
    SECTION("the checked-out tree's package_info.py: its classes are read, the nearest revision's checks apply") {
        TempDir dir;
        make_checkout(dir, kUnknown);
        check_out_submodule(dir, kUnknown);
        dir.write("3rdparty/Megatron-LM/megatron/core/package_info.py",
                  "MAJOR = 0\nMINOR = 17\nPATCH = 1\nPRE_RELEASE = \"rc2\"  # pre-release\n");
        dir.write("3rdparty/Megatron-LM/megatron/core/transformer/transformer_config.py", "class TransformerConfig:\n");
        const RevisionChoice c = detect(dir);
        CHECK(c.revision->name == "0.17");
        CHECK(c.mcore_tree == (dir.path() / "3rdparty/Megatron-LM").string());
        CHECK_FALSE(c.approximate);  // the classes come from the tree itself
        CHECK(c.reason.find("its megatron/core/package_info.py says 0.17.1rc2") != std::string::npos);
        CHECK(c.reason.find("its config classes are read from the checkout") != std::string::npos);
    }
    SECTION("not checked out: a core_v tag naming the commit in the submodule's git data; the facts stand in") {
        TempDir dir;
        make_checkout(dir, kUnknown);
        dir.write(".git/modules/3rdparty/Megatron-LM/packed-refs",
                  "# pack-refs with: peeled fully-peeled sorted\n"
                  "1111111111111111111111111111111111111111 refs/tags/core_v0.21.0\n^" +
                      kUnknown + "\n");
        const RevisionChoice c = detect(dir);
        CHECK(c.revision->name == "main");  // newer than every known revision: the newest main-line one
        CHECK(c.approximate);
        CHECK(c.mcore_tree.empty());
        CHECK(c.reason.find("the tag core_v0.21.0 names it") != std::string::npos);
    }
}

TEST_CASE("a checked-out pin that is known is read from the tree too", "[detection]") {
    TempDir dir;
    make_checkout(dir, kMainPin);
    check_out_submodule(dir, kMainPin);
    dir.write("3rdparty/Megatron-LM/megatron/core/transformer/transformer_config.py", "class TransformerConfig:\n");
    const RevisionChoice c = detect(dir);
    CHECK(c.revision->name == "0.20.dev");
    CHECK(c.mcore_tree == (dir.path() / "3rdparty/Megatron-LM").string());
    CHECK_FALSE(c.approximate);
}

TEST_CASE("the version a Megatron Core tree reports, and the nearest known revision for a version", "[detection]") {
    TempDir dir;
    CHECK_FALSE(mbl::mcore_package_version(dir.path()));
    dir.write("megatron/core/package_info.py", "MAJOR = 0\nMINOR = 20\nPATCH = 0\nPRE_RELEASE = ''\n");
    CHECK(mbl::mcore_package_version(dir.path()) == "0.20.0");

    const mbl::Schema& s = mbl::Schema::instance();
    std::string why;
    CHECK(s.nearest_revision("0.16.2", why)->name == "0.16");           // a patch release: its release
    CHECK(s.nearest_revision("core_v0.18.0rc1", why)->name == "0.18");  // a pre-release of a known line
    CHECK(s.nearest_revision("0.20.0", why)->name == "0.20.dev");       // the line's first known commit
    CHECK(why.find("0.20 line") != std::string::npos);
    CHECK(s.nearest_revision("0.23.0", why)->name == "main");  // newer than everything known
    CHECK_FALSE(s.nearest_revision("0.11.0", why));            // older than everything known
    CHECK_FALSE(s.nearest_revision("main", why));
}

TEST_CASE("tags are found loose or packed, annotated ones by the commit they point to", "[detection]") {
    TempDir dir;
    CHECK_FALSE(mbl::tag_of_commit(dir.path(), kMainPin));
    dir.write("refs/tags/core_v0.19.0", kMainPin + "\n");
    CHECK(mbl::tag_of_commit(dir.path(), kMainPin) == "core_v0.19.0");
    dir.write("packed-refs", kDevPin + " refs/tags/v1\n" + kUnknown + " refs/heads/x\n");
    CHECK(mbl::tag_of_commit(dir.path(), kDevPin) == "v1");
    CHECK_FALSE(mbl::tag_of_commit(dir.path(), kUnknown));  // a branch is not a tag
}
