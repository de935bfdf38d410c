#!/usr/bin/env python3
"""scripts/tidy_sources.py picks the sources a change reaches, from a real build's record of each object's inputs.
Usage: test_tidy_sources.py SOURCE_DIR BUILD_DIR"""
import os
import sys

root, build = (os.path.abspath(p) for p in sys.argv[1:3])
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import tidy_sources  # noqa: E402

pattern = f"^{root}/(core|pyeval|parser|memory|rules|config|engine|report|integrations|cli|gpu_check)/.*\\.cpp$"
rule = "rules/rc004_full_recompute_without_method.cpp"
failures = []


def expect(what, ok):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


picked, sources, everything = tidy_sources.pick(root, build, pattern, [rule])
expect(f"the product has sources ({len(sources)})", len(sources) > 100)
expect("a changed .cpp picks its own translation unit alone", picked == [os.path.join(root, rule)] and not everything)
picked, _, _ = tidy_sources.pick(root, build, pattern, ["core/value.hpp"])
expect(f"a changed header picks the sources that include it ({len(picked)})",
       os.path.join(root, "core/value.cpp") in picked)
picked, _, _ = tidy_sources.pick(root, build, pattern, ["docs/rules.md", "tests/fixtures/yaml/x.yaml"])
expect("a change no source reads picks none", picked == [])
for reaching in (".clang-tidy", "cmake/ThirdParty.cmake", "gpu_check/CMakeLists.txt", "schemas/precision.json"):
    picked, sources, everything = tidy_sources.pick(root, build, pattern, [reaching])
    expect(f"{reaching} reaches every source", everything and picked == sources)
picked, sources, everything = tidy_sources.pick(root, build, pattern, None)
expect("when git cannot tell, every source", everything and picked == sources)
picked, sources, everything = tidy_sources.pick(root, build, "^/nowhere/", [rule])
expect("a pattern matching nothing picks nothing", picked == [] and sources == [])
tus = tidy_sources.translation_units(build, [os.path.join(root, rule)])
members = [m for tu in tus for m in (tidy_sources.unity_members(tu) or [tu])]
expect(f"a source's translation unit is the one file that compiles it ({tus})",
       len(tus) == 1 and os.path.join(root, rule) in members)
_, sources, _ = tidy_sources.pick(root, build, pattern, None)
tus = tidy_sources.translation_units(build, sources)
covered = {m for tu in tus for m in (tidy_sources.unity_members(tu) or [tu])}
expect(f"every product source is in one of the {len(tus)} translation units clang-tidy parses",
       set(sources) <= covered and len(tus) <= len(sources))
sys.exit(1 if failures else 0)
