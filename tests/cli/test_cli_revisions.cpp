// Megatron Core revisions on the command line: the names --help lists, ambiguous names, detection from a Bridge
// checkout (built here with git), and the upgrade check `check --mcore A,B`.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "../support/run.hpp"
#include "../support/temp_dir.hpp"

namespace {
using mbl::test::has;
using mbl::test::run;

using json = nlohmann::json;
using mbl::test::TempDir;

const std::string kGit = "git -c user.name=t -c user.email=t@example.org -c init.defaultBranch=main ";
const std::string kMainPin = "2a75ac12c54ba6a42b34024756820bf819a2e25f";  // 0.20.dev
const std::string kDevPin = "b3b1e2d793c596c2fa61076d001ab93f294e4e87";   // dev

// Two recipes sharing a helper that selects mhc recompute on a hyper-connection MoE model: dev accepts them,
// 0.20.dev does not know the label.
const char* kRecipes = R"(from megatron.bridge.models import GPTModelProvider
from megatron.bridge.training.config import ConfigContainer


def _hyper_connections(cfg):
    cfg.model.enable_hyper_connections = True
    cfg.model.recompute_granularity = "selective"
    cfg.model.recompute_modules = ["moe_act", "mhc"]


def small_config() -> ConfigContainer:
    model = GPTModelProvider(num_layers=4, hidden_size=256, num_attention_heads=4, num_moe_experts=4,
                             moe_grouped_gemm=True)
    cfg = ConfigContainer(model=model)
    _hyper_connections(cfg)
    return cfg


def large_config() -> ConfigContainer:
    cfg = small_config()
    cfg.model.num_layers = 8
    return cfg
)";

const char* kContainer = R"(from dataclasses import dataclass


@dataclass
class ConfigContainer:
    model: object = None
)";

// A Bridge checkout whose committed gitlink pins `gitlink`, with the recipes above and a YAML config.
void make_checkout(const TempDir& dir, const std::string& gitlink) {
    dir.write("src/megatron/bridge/__init__.py", "");
    dir.write("src/megatron/bridge/training/config.py", kContainer);
    dir.write("src/megatron/bridge/recipes/hyper.py", kRecipes);
    dir.write("configs/run.yaml", "model:\n  recompute_granularity: selective\n  recompute_modules: [gdn_norm_out]\n");
    std::filesystem::create_directories(dir.path() / "3rdparty" / "Megatron-LM");
    REQUIRE(mbl::test::run_shell("cd '" + dir.path().string() + "' && " + kGit + "init -q && " + kGit + "add -A && " +
                                 kGit + "update-index --add --cacheinfo 160000," + gitlink +
                                 ",3rdparty/Megatron-LM && " + kGit + "commit -qm pin")
                .code == 0);
}

}  // namespace

TEST_CASE("the --help of every command that takes --mcore lists each revision name with what it is",
          "[cli][revisions]") {
    for (const char* command : {"check", "show", "estimate", "config", "lsp", "rules", "gpu-check"}) {
        auto r = run(std::string(command) + " --help");
        INFO(command << "\n" << r.out);
        CHECK(r.code == 0);
        for (int minor = 12; minor <= 19; ++minor) CHECK(has(r.out, "  0." + std::to_string(minor) + " "));
        CHECK(has(r.out, "  0.12      release core_v0.12.0\n"));  // its patch releases have facts of their own
        CHECK(has(r.out, "have facts of their own and are checked exactly"));
        CHECK(has(r.out, "release core_v0.19.0; the default outside a Bridge checkout"));
        CHECK(has(r.out, "0.20.dev  commit 2a75ac12c54b (2026-08-13, main branch), Megatron Bridge's main pin"));
        CHECK(has(r.out, "dev       commit b3b1e2d793c5 (2026-08-13, dev branch), Megatron Bridge's dev pin"));
        CHECK(has(r.out, "main      commit d98e8a64ddf3 (2026-08-22, main branch)"));
        CHECK(has(r.out, "bridge-dev (= dev), bridge-main (= 0.20.dev)"));
        CHECK(has(r.out, "refused: bridge is ambiguous"));
    }
    CHECK(has(run("check --help").out, "A,B lints for both"));
}

TEST_CASE("every revision name means one revision, and ambiguous names are refused with what they could mean",
          "[cli][revisions]") {
    TempDir dir;
    const std::string cfg =
        dir.write("cfg.yaml", "model:\n  recompute_granularity: selective\n  recompute_modules: [gdn]\n");
    // Only the dev branch knows the gdn label, so the names are told apart by whether RC008 fires.
    for (const char* name : {"dev", "bridge-dev", "b3b1e2d7", "B3B1E2D793C596C2FA61076D001AB93F294E4E87"}) {
        auto r = run(std::string("check --mcore ") + name + " " + cfg);
        INFO(name << "\n" << r.out);
        CHECK_FALSE(has(r.out, "RC008"));
        CHECK(has(r.out, "RC029"));  // no gated-delta-net attention
    }
    for (const char* name :
         {"0.20.dev", "bridge-main", "2a75ac12c54b", "main", "0.19", "core_v0.19.0", "0.19.0", "0.15.2"}) {
        auto r = run(std::string("check --mcore ") + name + " " + cfg);
        INFO(name << "\n" << r.out);
        CHECK(has(r.out, "error[RC008]"));
    }
    for (const char* name : {"bridge", "0.20"}) {
        auto r = run(std::string("check --mcore ") + name + " " + cfg);
        INFO(r.out);
        CHECK(r.code == 2);
        CHECK(has(r.out, std::string("Megatron Core revision \"") + name + "\" for --mcore is ambiguous"));
    }
    auto bridge = run("check --mcore bridge " + cfg);
    CHECK(has(bridge.out, "0.20.dev (.main.commit"));
    CHECK(has(bridge.out, "dev (.dev.commit"));
    dir.write(".mbridge-lint.toml", "mcore = \"bridge\"\n");
    auto file = run("check --color never " + cfg);
    CHECK(file.code == 2);
    CHECK(has(file.out,
              ".mbridge-lint.toml:1:1: error[IN011]: Megatron Core revision \"bridge\" for mcore is ambiguous"));
}

TEST_CASE("without --mcore a file in a Bridge checkout is linted for the revision its gitlink pins, said once",
          "[cli][revisions]") {
    TempDir dir;
    make_checkout(dir, kMainPin);
    const std::string yaml = (dir.path() / "configs/run.yaml").string();
    const std::string recipes = (dir.path() / "src/megatron/bridge/recipes/hyper.py").string();

    auto r = run("check --color never " + yaml + " " + recipes);
    INFO(r.out);
    CHECK(r.code == 1);
    CHECK(has(r.out, "error[RC008]: \"mhc\" is not a recompute_modules label in Megatron Core 0.20.dev"));
    const std::string note = "Megatron Core 0.20.dev for files in " + dir.path().string() +
                             ": its 3rdparty/Megatron-LM gitlink pins 2a75ac12c54b; the submodule is not checked out; "
                             "pass --mcore to choose another revision\n";
    CHECK(has(r.out, note));
    CHECK(r.out.find(note) == r.out.rfind(note));  // once per run, not per file

    auto j = run("check --format json " + yaml + " " + recipes);
    const json doc = json::parse(j.out);
    REQUIRE(doc["revisions"].size() == 1);
    CHECK(doc["revisions"][0]["revision"] == "0.20.dev");
    CHECK(doc["revisions"][0]["source"] == "detected");
    CHECK(doc["revisions"][0]["commit"] == kMainPin);
    CHECK(doc["revisions"][0]["checkout"] == dir.path().string());

    // scripts/switch_mcore.sh dev checks the dev commit out in the submodule: that is what the job runs.
    dir.write("3rdparty/Megatron-LM/.git", "gitdir: ../../.git/modules/3rdparty/Megatron-LM\n");
    dir.write(".git/modules/3rdparty/Megatron-LM/HEAD", kDevPin + "\n");
    auto dev = run("check --color never " + recipes);
    INFO(dev.out);
    CHECK(dev.code == 0);
    CHECK(has(dev.out,
              "Megatron Core dev for files in " + dir.path().string() +
                  ": 3rdparty/Megatron-LM is checked out at b3b1e2d793c5 (the committed gitlink pins 2a75ac12c54b)"));

    // --mcore, or mcore in the configuration file, wins, and then nothing is detected.
    auto explicit_rev = run("check --color never --mcore 0.20.dev " + recipes);
    CHECK(has(explicit_rev.out, "RC008"));
    CHECK_FALSE(has(explicit_rev.out, "for files in"));
    dir.write(".mbridge-lint.toml", "mcore = \"0.20.dev\"\n");
    auto configured = run("check --color never " + recipes);
    CHECK(has(configured.out, "RC008"));
    CHECK_FALSE(has(configured.out, "for files in"));
    auto shown = run("config --format json " + recipes);
    CHECK(json::parse(shown.out)["settings"]["mcore"]["value"] == "0.20.dev");
}

TEST_CASE("config shows the detected revision and where it came from", "[cli][revisions]") {
    TempDir dir;
    make_checkout(dir, kMainPin);
    auto r = run("config " + (dir.path() / "configs/run.yaml").string());
    INFO(r.out);
    CHECK(has(r.out, "mcore            = \"0.20.dev\""));
    CHECK(
        has(r.out, "# detected from " + dir.path().string() + ": its 3rdparty/Megatron-LM gitlink pins 2a75ac12c54b"));
}

TEST_CASE("check --mcore A,B reports what appears and disappears, per recipe, with a CI exit code",
          "[cli][revisions]") {
    TempDir dir;
    make_checkout(dir, kMainPin);
    const std::string yaml = (dir.path() / "configs/run.yaml").string();
    const std::string recipes = (dir.path() / "src/megatron/bridge/recipes/hyper.py").string();

    // 0.20.dev -> dev: the mhc label becomes valid (both recipes); gdn_norm_out stops being one, so at the same
    // place the missing gated-delta-net variant (RC011) gives way to the unknown label (RC008).
    auto up = run("check --color never --mcore 0.20.dev,dev " + yaml + " " + recipes);
    INFO(up.out);
    CHECK(up.code == 1);  // dev has an error 0.20.dev has not
    CHECK(has(up.out, "Megatron Core 0.20.dev -> dev: what changes, per recipe and config\n"));
    CHECK(has(up.out, "hyper.py:8:47: disappears at dev: error[RC008] \"mhc\" is not a recompute_modules label in "
                      "Megatron Core 0.20.dev\n    in 2 recipes: large_config, small_config\n"));
    CHECK(has(up.out,
              "run.yaml:3:23: appears at dev: error[RC008] \"gdn_norm_out\" is not a recompute_modules label in "
              "Megatron Core dev\n"));
    // run.yaml is an overlay in the checkout: the recipe it is applied to may set the attention variant, so RC011 is
    // a warning there (Megatron Core raises only if the recipe leaves the variant at its default).
    CHECK(has(up.out,
              "run.yaml:3:23: disappears at dev: warning[RC011] \"gdn_norm_out\" recompute needs a gated-delta-net "
              "attention variant"));
    // The recipe's assignment of enable_hyper_connections has no effect at 0.20.dev (a warning), and is a field at dev.
    CHECK(has(up.out, "hyper.py:6:5: disappears at dev: warning[IN004] model field \"enable_hyper_connections\" has "
                      "no effect in Megatron Core 0.20.dev"));
    CHECK(has(up.out, "4 changes (1 appear, 3 disappear, 0 change severity) in 2 files checked; 0.20.dev: 3 problems "
                      "(1 error, 2 warnings); dev: 1 problem (1 error)\ndev has 1 error that 0.20.dev has not\n"));

    // Only the recipes: nothing gets worse, exit 0.
    auto recipes_only = run("check --color never --mcore 0.20.dev,dev " + recipes);
    CHECK(recipes_only.code == 0);
    CHECK_FALSE(has(recipes_only.out, "has 1 error"));

    auto j = run("check --format json --mcore 0.20.dev,dev " + yaml + " " + recipes);
    const json doc = json::parse(j.out);
    CHECK(doc["upgrade"]["from"] == "0.20.dev");
    CHECK(doc["upgrade"]["to"] == "dev");
    REQUIRE(doc["changes"].size() == 4);
    CHECK(doc["changes"][0]["change"] == "appears");
    CHECK(doc["changes"][0]["before"].is_null());
    CHECK(doc["changes"][0]["after"] == "error");
    CHECK(doc["changes"][0]["recipes"] == json::array());
    json gone;
    for (const json& c : doc["changes"])
        if (c["code"] == "RC008" && c["change"] == "disappears") gone = c;
    CHECK(gone["change"] == "disappears");
    CHECK(gone["code"] == "RC008");
    CHECK(gone["before"] == "error");
    CHECK(gone["after"].is_null());
    CHECK(gone["recipes"] == json::array({"large_config", "small_config"}));
    CHECK(doc["summary"]["new_errors"] == 1);
    CHECK(doc["summary"]["files_checked"] == 2);

    // The other way round the recipes' error appears.
    auto down = run("check --color never --mcore dev,0.20.dev " + recipes);
    CHECK(down.code == 1);
    CHECK(has(down.out, "hyper.py:8:47: appears at 0.20.dev: error[RC008]"));

    // The same revision twice, by two names: no changes.
    auto same = run("check --color never --mcore 0.20.dev,bridge-main " + yaml);
    CHECK(same.code == 0);
    CHECK(has(same.out, "no changes: 0.20.dev and 0.20.dev report the same problems in 1 file checked"));

    CHECK(run("check --mcore 0.20.dev,dev --fix " + yaml).code == 2);
    CHECK(run("check --mcore 0.20.dev,dev --format sarif " + yaml).code == 2);
    CHECK(run("check --mcore 0.20.dev,nope " + yaml).code == 2);
    CHECK(run("check --mcore 0.19,main,dev " + yaml).code == 2);
}

TEST_CASE("check with --mcore-path reads the config classes of the Megatron Core the job imports", "[cli][revisions]") {
    // tests/data/mcore_source: excerpts of core_v0.16.0 and of the dev pin (which has enable_hyper_connections).
    const std::string data = std::string(MBRIDGE_LINT_TEST_DATA) + "/data/mcore_source/";
    TempDir dir;
    dir.write("run.yaml", "model:\n  enable_hyper_connections: true\n  recompute_granularity: selective\n"
                          "  recompute_modules: [core_attn]\n");
    const std::string yaml = (dir.path() / "run.yaml").string();

    auto dev = run("check --color never --mcore-path " + data + "dev " + yaml);
    INFO(dev.out);
    CHECK(dev.code == 0);
    // Said once: the tree read, and the revision whose checks apply (the nearest by package_info.py's 0.19.0).
    CHECK(has(dev.out, "Megatron Core 0.19: --mcore-path " + data +
                           "dev: its config classes are read; the checks are "
                           "Megatron Core 0.19's (its megatron/core/package_info.py says 0.19.0"));

    auto old = run("check --color never --mcore-path " + data + "0.16 " + yaml);
    INFO(old.out);
    CHECK(old.code == 0);  // Megatron Bridge skips a YAML key its config lacks, with a warning in its log
    CHECK(has(old.out,
              "warning[IN004]: model field \"enable_hyper_connections\" has no effect in Megatron Core 0.16 (it "
              "is only in Megatron Core dev)"));

    // --mcore names the checks; the tree still gives the classes. A folder without Megatron Core is refused.
    auto named = run("check --color never --mcore dev --mcore-path " + data + "dev " + yaml);
    CHECK(named.code == 0);
    CHECK(has(named.out, "the checks are Megatron Core dev's (--mcore dev)"));
    auto missing = run("check --color never --mcore-path " + dir.path().string() + " " + yaml);
    CHECK(missing.code == 2);
    CHECK(has(missing.out, "there is no megatron/core/transformer/transformer_config.py under it"));

    // show and config say where the facts came from.
    auto shown = run("show --mcore-path " + data + "dev " + yaml + " --only model.multi_latent_attention");
    INFO(shown.out);
    CHECK(has(shown.out, "# Megatron Core 0.19: read from " + data + "dev (megatron-core 0.19.0)"));
    auto config = run("config --mcore-path " + data + "0.16 " + dir.path().string());
    INFO(config.out);
    CHECK(has(config.out, "Megatron Core 0.16 facts (config classes, defaults, recompute labels): read from " + data +
                              "0.16 (megatron-core 0.16.0)"));
    auto bundled = run("config --mcore 0.20.dev " + dir.path().string());
    CHECK(has(bundled.out, "Megatron Core 0.20.dev facts (config classes, defaults, recompute labels): Megatron-LM "
                           "2a75ac12c54b (bundled; scripts/mcore_facts.py)"));
}

// Megatron-LM's offload/recompute check (RC021) arrived in commit 69c486825c (2026-07-02) and is in core_v0.19.0;
// commit 002255075c (2026-06-13, main) is a 0.19-numbered commit without it. Both have facts of their own (the store,
// schemas/mcore/facts/), so the label is not what decides. 2b551c6875 (main, just before 69c486825c) has none: the
// table of commits (schemas/mcore/commits.json) places it, and 69c486825c's facts stand in.
TEST_CASE("a pinned commit is checked with its own facts, else with those of the commit nearest it, not by its label",
          "[cli][revisions]") {
    const char* kOffloadedMoe =
        "model:\n  num_moe_experts: 8\n  moe_grouped_gemm: true\n  fine_grained_activation_offloading: true\n"
        "  offload_modules: [expert_fc1]\n  recompute_granularity: selective\n  recompute_modules: [moe]\n";
    SECTION("pinned by a gitlink, the submodule not checked out") {
        TempDir tagged, before;
        make_checkout(tagged, "5be9626709af2722333bf54797c954c09edeada3");  // core_v0.19.0
        make_checkout(before, "002255075c3728fded9a2e435677840b08560d55");
        tagged.write("configs/offload.yaml", kOffloadedMoe);
        before.write("configs/offload.yaml", kOffloadedMoe);
        auto at_tag = run("check --color never " + (tagged.path() / "configs/offload.yaml").string());
        INFO(at_tag.out);
        CHECK(at_tag.code == 1);
        CHECK(has(at_tag.out, "error[RC021]"));
        auto at_commit = run("check --color never " + (before.path() / "configs/offload.yaml").string());
        INFO(at_commit.out);
        CHECK_FALSE(has(at_commit.out, "RC021"));
        const std::string note = "its 3rdparty/Megatron-LM gitlink pins 002255075c37; the submodule is not checked out";
        CHECK(has(at_commit.out, note));
        CHECK(at_commit.out.find(note) == at_commit.out.rfind(note));
        CHECK_FALSE(has(at_commit.out, "stand in"));
    }
    SECTION("a commit with no facts of its own: the nearest commit's checks, a check the other side lacks a warning") {
        TempDir dir;
        make_checkout(dir, "2b551c6875dc0fc78aa421435283da6938a22387");
        dir.write("configs/offload.yaml", kOffloadedMoe);
        auto r = run("check --color never " + (dir.path() / "configs/offload.yaml").string());
        INFO(r.out);
        CHECK(has(r.out, "warning[RC021]"));
        CHECK_FALSE(has(r.out, "error[RC021]"));
        const std::string note =
            "that is a commit of 2026-07-02 on main, which mbridge-lint has no facts for; those of 69c486825c89, the "
            "nearest revision, stand in, and a check 8b3d8a5d9719's source does not state too is only a warning";
        CHECK(has(r.out, note));
        CHECK(r.out.find(note) == r.out.rfind(note));
    }
    SECTION("named with --mcore") {
        TempDir dir;
        const std::string cfg = dir.write("offload.yaml", kOffloadedMoe);
        auto tag = run("check --color never --mcore core_v0.19.0 " + cfg);
        CHECK(has(tag.out, "error[RC021]"));
        auto commit = run("check --color never --mcore 002255075c37 " + cfg);
        INFO(commit.out);
        CHECK(commit.code == 0);
        CHECK_FALSE(has(commit.out, "RC021"));
        CHECK_FALSE(has(commit.out, "stand in"));
        auto placed = run("check --color never --mcore 2b551c6875dc " + cfg);
        INFO(placed.out);
        CHECK(has(placed.out, "--mcore 2b551c6875dc: that is a commit of 2026-07-02 on main"));
        auto unknown = run("check --mcore 0123456789abcdef " + cfg);
        CHECK(unknown.code == 2);  // a hash the table does not list is no revision name
    }
    SECTION("a commit the table does not list is taken as newer than the newest, and the output says so once") {
        TempDir dir;
        make_checkout(dir, "0123456789abcdef0123456789abcdef01234567");
        auto r = run("check --color never " + (dir.path() / "configs/run.yaml").string());
        INFO(r.out);
        const std::string note = "it is not among the Megatron-LM commits mbridge-lint lists (main and dev to "
                                 "2026-08-22, the release tags, Megatron Bridge's pins), so it is taken as newer and "
                                 "the facts of main, the newest, stand in";
        CHECK(has(r.out, note));
        CHECK(r.out.find(note) == r.out.rfind(note));
    }
}

TEST_CASE("a file nothing pins says once which revision was assumed and how to pin it", "[cli][revisions]") {
    TempDir dir;
    const std::string a = dir.write("a.yaml", "model:\n  recompute_granularity: selective\n");
    const std::string b = dir.write("b.yaml", "model:\n  recompute_granularity: selective\n");
    auto r = run("check --color never " + a + " " + b);
    INFO(r.out);
    const std::string note = "so the default 0.19 is assumed; pin it with --mcore REVISION or mcore = \"REVISION\"";
    CHECK(has(r.out, note));
    CHECK(r.out.find(note) == r.out.rfind(note));
    CHECK_FALSE(has(run("check --color never --mcore 0.19 " + a).out, "is assumed"));
}

// Megatron Core's __post_init__ fills ffn_hidden_size (4 x hidden_size) and kv_channels (hidden / heads) when unset:
// `show` prints what the job runs with, the value the config holds and the line that rewrote it, in Python's spelling.
TEST_CASE("show prints the values Megatron Core's __post_init__ rewrites, with the value written and its line",
          "[cli][revisions]") {
    TempDir dir;
    const std::string cfg =
        dir.write("s.yaml", "model:\n  num_layers: 4\n  hidden_size: 256\n  num_attention_heads: 4\n");
    auto r = run("show --mcore 0.19 " + cfg);
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(has(r.out, "ffn_hidden_size: 1024  # Megatron Core 0.19 rewrites None to this "
                     "(megatron/core/transformer/transformer_config.py:"));
    CHECK(has(r.out, "kv_channels: 64  # Megatron Core 0.19 rewrites None to this"));
    CHECK_FALSE(has(r.out, "\\x01"));  // no executor-internal spelling of an enum member
}
