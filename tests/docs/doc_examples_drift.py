#!/usr/bin/env python3
"""The doc test notices drift: README.md's example, with one word of a rule's message changed as if the rule's message
had changed without the docs, fails scripts/doc_examples.py and shows the line; --update brings the block back to
what the binary prints, which is the README as committed (itself checked by the doc_examples test).

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
    print("1 passed, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
