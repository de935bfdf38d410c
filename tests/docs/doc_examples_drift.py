#!/usr/bin/env python3
"""The doc test notices drift: README.md's example, with one word of a rule's message changed as if the rule's message
had changed without the docs, fails scripts/doc_examples.py and shows the line; --update brings the block back to
what the binary prints, which is the README as committed (itself checked by the doc_examples test). With --bridge, an
illustration made at a Bridge commit runs in the checkout given when its HEAD is that commit, and is only listed
otherwise.

Usage: tests/docs/doc_examples_drift.py BINARY"""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SCRIPT = os.path.join(ROOT, "scripts", "doc_examples.py")
MESSAGE = 'error[RC004]: recompute_granularity is "full" but recompute_method is not set'
DRIFTED = 'error[RC004]: recompute_granularity is "full" but recompute_method is unset'


def doc_test(binary, path, *options):
    proc = subprocess.run([sys.executable, SCRIPT, "--binary", binary, *options, path], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    return proc.returncode, proc.stdout


def main():
    binary = sys.argv[1]
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    assert MESSAGE in readme, "README.md no longer shows RC004's message: update this test"
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "README.md")
        with open(path, "w", encoding="utf-8") as f:
            f.write(readme.replace(MESSAGE, DRIFTED, 1))
        code, out = doc_test(binary, path)
        assert code == 1, f"a drifted example passed:\n{out}"
        assert "-" + "examples/broken_recompute.yaml:10:3: " + DRIFTED in out, out
        assert "+" + "examples/broken_recompute.yaml:10:3: " + MESSAGE in out, out
        code, out = doc_test(binary, path, "--update")
        assert code == 0, out
        with open(path, encoding="utf-8") as f:
            assert f.read() == readme, "--update did not restore the README's example"
    bridge_illustrations(binary)
    print("2 passed, 0 failed")
    return 0


def bridge_illustrations(binary):
    """A scratch "Bridge checkout" (a git repository with one config) and a page whose illustration was made in it."""
    with tempfile.TemporaryDirectory() as tmp:
        bridge = os.path.join(tmp, "bridge")
        os.makedirs(bridge)
        with open(os.path.join(ROOT, "examples", "broken_recompute.yaml"), encoding="utf-8") as f:
            config = f.read()
        with open(os.path.join(bridge, "run.yaml"), "w", encoding="utf-8") as f:
            f.write(config)
        git = ["git", "-C", bridge, "-c", "user.name=t", "-c", "user.email=t@t"]
        subprocess.run(git[:3] + ["init", "-q"], check=True)
        subprocess.run(git + ["add", "run.yaml"], check=True)
        subprocess.run(git + ["commit", "-qm", "one config"], check=True)
        head = subprocess.run(git[:3] + ["rev-parse", "HEAD"], stdout=subprocess.PIPE, text=True, check=True).stdout
        page = os.path.join(tmp, "page.md")

        def write_page(commit):
            with open(page, "w", encoding="utf-8") as f:
                f.write("```\n$ cd Megatron-Bridge\n$ mbridge-lint check --output-format concise run.yaml\nstale\n```\n"
                        f"*Illustration, not run by the doc test: Megatron Bridge at {commit}.*\n")

        write_page(head[:9])
        code, out = doc_test(binary, page)
        assert code == 0 and "illustration, not run" in out, out
        code, out = doc_test(binary, page, "--bridge", bridge)
        assert code == 1 and "+run.yaml:10:3: error[RC004]" in out, out
        code, out = doc_test(binary, page, "--bridge", bridge, "--update")
        assert code == 0, out
        with open(page, encoding="utf-8") as f:
            assert "run.yaml:10:3: error[RC004]" in f.read(), "--update did not write the illustration's output"
        write_page("0123456789")  # made at another commit: listed, not run
        code, out = doc_test(binary, page, "--bridge", bridge)
        assert code == 0 and "illustration, not run" in out, out


if __name__ == "__main__":
    sys.exit(main())
