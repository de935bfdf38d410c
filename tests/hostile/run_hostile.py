#!/usr/bin/env python3
"""The hostile-input corpus: every case of manifest.toml run through the real binary.

Each case names its input files (copied from cases/, or made by a generator below for inputs too large to keep in
the repository), an optional shell `setup` run first in the case's folder (FIFOs, links, permissions), the
mbridge-lint arguments, and what must hold: the exit code, fragments that must appear in standard output + error,
fragments that must not (content of files outside the tree), a well-formedness check of the report (`validate`:
xml or json) and a shell `after` check (a file left untouched). A case that hangs is killed by `timeout` and fails:
nothing is timed. `--figures` prints each case's wall time and peak memory, for the notes, never asserted.

Usage: run_hostile.py BINARY [--only SUBSTRING] [--figures]
"""
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
import xml.dom.minidom

HERE = os.path.dirname(os.path.abspath(__file__))
HANG_SECONDS = 60  # generous: a sanitizer build runs these too; the limits themselves end a case in about 2 s


# --- generators: inputs too large to keep as files --------------------------------------------------------------

def dotted_key(parts, header=False, section=""):
    key = ".".join(["a"] * parts)
    return (f"[{key}]\nx = 1\n" if header else f"{section}{key} = 1\n").encode()


def nested_inline_tables(depth):
    return ("a = " + "{b = " * depth + "1" + "}" * depth + "\n").encode()


def nested_arrays(depth):
    return ("a = " + "[" * depth + "]" * depth + "\n").encode()


def yaml_scalar_bomb(length, fan, levels):
    # One long string aliased `fan` times per level: the text grows as length * fan ** levels.
    out = [f"s0: &s0 \"{'x' * length}\""]
    for level in range(1, levels + 1):
        out.append(f"s{level}: &s{level} [" + ", ".join([f"*s{level - 1}"] * fan) + "]")
    out.append(f"model:\n  recompute_modules: *s{levels}")
    return ("\n".join(out) + "\n").encode()


def yaml_list_bomb(fan, levels):
    out = ["a0: &a0 [" + ", ".join(["x"] * fan) + "]"]
    for level in range(1, levels + 1):
        out.append(f"a{level}: &a{level} [" + ", ".join([f"*a{level - 1}"] * fan) + "]")
    out.append(f"model:\n  recompute_modules: *a{levels}")
    return ("\n".join(out) + "\n").encode()


def yaml_merge_bomb(fan, levels):
    out = ["m0: &m0 {" + ", ".join(f"k{i}: {i}" for i in range(fan)) + "}"]
    for level in range(1, levels + 1):
        items = ", ".join(f"c{i}: *m{level - 1}" for i in range(fan))
        out.append(f"m{level}: &m{level} {{{items}}}")
    out.append(f"model:\n  num_layers: 2\nextra: *m{levels}")
    return ("\n".join(out) + "\n").encode()


def yaml_deep_flow(depth):
    return ("model: " + "[" * depth + "]" * depth + "\n").encode()


def yaml_deep_block(depth):
    return ("model:\n" + "".join(" " * (2 * (i + 1)) + f"k{i}:\n" for i in range(depth))).encode()


def yaml_many_keys(count):
    return ("model:\n  num_layers: 2\nextra:\n" + "".join(f"  k{i}: {i}\n" for i in range(count))).encode()


def yaml_one_line_flow_mapping(entries):
    return ("model: {" + ", ".join(f"k{i}: {i}" for i in range(entries)) + "}\n").encode()


def py_long_expression(kind, n):
    """A recipe whose X is one very long (left-nested) expression: tree-sitter reads it, the evaluator bounds it."""
    parts = {
        "plus": "+".join(["1"] * n),
        "attribute": "a" + ".b" * n,
        "calls": "len" + "()" * n,
        "subscripts": "[1]" + "[0]" * n,
        "not": "not " * n + "1",
        "lambda": "lambda: " * n + "1",
        "ternary": " if 1 else ".join(["1"] * n),
        "comparison": " < ".join(["1"] * n),
        "and": " and ".join(["1"] * n),
        "string_concat": " ".join(["'a'"] * n),
    }
    return recipe("X = " + parts[kind])


def big_file(mib):
    return b"# " + b"x" * (mib << 20) + b"\n"


RECIPE_HEAD = ("from megatron.bridge.training.config import ConfigContainer\n"
               "from megatron.bridge.models import GPTModelProvider\n\n\n")


def recipe(body):
    lines = "".join("    " + line + "\n" for line in body.split("\n"))
    return (RECIPE_HEAD + "def hostile_config() -> ConfigContainer:\n" + lines +
            "    cfg = ConfigContainer(model=GPTModelProvider(num_layers=2))\n"
            "    cfg.model.recompute_granularity = X\n    return cfg\n").encode()


def py_dict_comprehension(n):
    return recipe(f'd = {{i: i for i in range({n})}}\nX = "full" if len(d) else None')


def py_dict_splat_doubling(levels):
    body = ['d = {"k": 1}']
    body += [f'd = {{**d, **{{k + "_{level}": 1 for k in d}}}}' for level in range(levels)]
    body.append('X = "full" if d else None')
    return recipe("\n".join(body))


def py_str_replace_doubling(levels):
    return recipe("\n".join(['s = "ab"'] + ['s = s.replace("a", s)'] * levels + ['X = "full" if s else None']))


def py_join_doubling(levels):
    return recipe("\n".join(['s = "ab"'] + ['s = s.join([s, s])'] * levels + ['X = "full" if s else None']))


def py_concat_loop(n):
    return recipe(f's = "x" * 90000\nt = []\nfor i in range({n}):\n    t.append(s + str(i))\nX = "full" if t else None')


def recipe_setting(body, setting):
    lines = "".join("    " + line + "\n" for line in body.split("\n"))
    return (RECIPE_HEAD + "def hostile_config() -> ConfigContainer:\n" + lines +
            "    cfg = ConfigContainer(model=GPTModelProvider(num_layers=2))\n    " + setting + "\n    return cfg\n").encode()


def py_nested_list_doubling(levels):
    # Shared in the evaluator, 2 ** levels values once written into the config tree.
    return recipe_setting("\n".join(['l = ["core_attn"]'] + ["l = [l, l]"] * levels), "cfg.model.recompute_modules = l")


def py_nested_dict_doubling(levels):
    return recipe_setting("\n".join(['d = {"a": 1}'] + ['d = {"x": d, "y": d}'] * levels), "cfg.checkpoint = d")


def py_format_doubling(levels):
    return recipe("\n".join(['s = "ab"'] + ['s = "{}{}".format(s, s)'] * levels + ['X = "full" if s else None']))


def py_fstring_doubling(levels):
    return recipe("\n".join(['s = "ab"'] + ['s = f"{s}{s}"'] * levels + ['X = "full" if s else None']))


def py_repr_fan_out(levels):
    return recipe_setting("\n".join(['l = ["core_attn"]'] + ["l = [l] * 20"] * levels + ["s = str(l)"]),
                          "cfg.model.recompute_granularity = s")


def py_many_recipes(n):
    out = [RECIPE_HEAD]
    for i in range(n):
        out.append(f"def r{i}_config() -> ConfigContainer:\n    return ConfigContainer(model=GPTModelProvider())\n\n")
    return "".join(out).encode()


def py_comment_run(n, top=False):
    """n comment lines in a row: in a function, tree-sitter-python's scanner re-reads the rest of the run at each one
    (quadratic); at the top level, tree-sitter 0.20 crashes past 65,535 of them."""
    comments = "\n".join(f"# comment {i}" for i in range(n))
    if top:
        return (comments + "\n").encode() + recipe('X = "full"')
    return recipe(comments + '\nX = "full"')


def py_tokens(n):
    """A module-level list of n elements, one per line: about 2n tokens."""
    return ("DATA = [\n" + "".join(f"    {i},\n" for i in range(n)) + "]\n").encode() + recipe('X = "full"')


def py_nested_brackets(depth, opener="(", closer=")"):
    return recipe("X = " + opener * depth + '"full"' + closer * depth)


def py_nested_blocks(levels):
    """A recipe whose module holds `levels` nested blocks (CPython refuses a statement 100 levels in)."""
    body = "".join(" " * i + "if True:\n" for i in range(levels)) + " " * levels + "pass\n"
    return body.encode() + recipe('X = "full"')


def py_nested_fstrings(depth):
    return recipe("X = " + 'f"{' * depth + '1' + '}"' * depth)


def py_module_top_dict(n):
    """A dict literal of n entries at the module's top: its key comparisons spend the module's step budget."""
    return ("DATA = {\n" + "".join(f"    \"k{i}\": {i},\n" for i in range(n)) + "}\n").encode() + recipe('X = "full"')


def py_hash_in_strings(n):
    """Comment-like text inside strings must survive the comment blanking: the recipe sets it as the granularity,
    and RC002 quotes it back."""
    lines = ['s = """', *[f"# not a comment {i}" for i in range(n)], '"""', 'X = s[-40:] + "|a#b"']
    return recipe("\n".join(lines))


def py_deep_python_helpers():
    """Recursion and nesting as deep as the highest python-call-depth and python-expr-depth allow."""
    return ("def down(n):\n    return down(n - 1) if n else 0\n\n\n").encode() + recipe(
        "D = down(400)\nE = " + "- " * 990 + "1\nX = \"full\"")


def lsp_stream(*messages):
    out = b""
    for m in messages:
        body = json.dumps(m).encode()
        out += b"Content-Length: %d\r\n\r\n" % len(body) + body
    return out


def lsp_session_actions(open_path, text):
    """Opens a document and asks for its code actions: the server lints it (and loads its configuration) before it
    answers request 2, so a reader that would crash ends the stream without the answers to 2 and 3."""
    uri = "file://" + open_path
    whole = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}
    return lsp_stream(
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}, "rootUri": None}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "method": "textDocument/didOpen",
         "params": {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}}},
        {"jsonrpc": "2.0", "id": 2, "method": "textDocument/codeAction",
         "params": {"textDocument": {"uri": uri}, "range": whole, "context": {"diagnostics": []}}},
        {"jsonrpc": "2.0", "id": 3, "method": "shutdown"},
        {"jsonrpc": "2.0", "method": "exit"})


def lsp_raw(data):
    return data.encode() if isinstance(data, str) else data


GENERATORS = {name: fn for name, fn in globals().items() if callable(fn) and not name.startswith("_")}


def make_input(spec, folder):
    """`spec` is "cases/NAME" (a file of the corpus) or "gen:EXPR" (a generator call, EXPR in Python syntax; the
    LSP generators see FOLDER, the case's folder)."""
    if spec.startswith("gen:"):
        return eval(spec[4:], {"__builtins__": {}}, dict(GENERATORS, FOLDER=folder))  # noqa: S307 (our own manifest)
    with open(os.path.join(HERE, spec), "rb") as f:
        return f.read()


def run_case(binary, case):
    folder = tempfile.mkdtemp(prefix="hostile-")
    try:
        work = os.path.join(folder, "work")
        os.makedirs(work)
        for name, spec in case.get("files", {}).items():
            path = os.path.join(work, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(make_input(spec, work))
        env = dict(os.environ, LINT=binary, OUTSIDE=folder, NO_COLOR="1")
        if case.get("setup"):
            subprocess.run(["bash", "-c", case["setup"]], cwd=work, env=env, check=True)
        command = f"timeout -s KILL {HANG_SECONDS} \"$LINT\" {case['args']}"
        if case.get("not_as_root") and os.geteuid() == 0:
            # Root reads whatever the permissions say: run as the user namespace's nobody, who cannot.
            os.chmod(folder, 0o755)
            os.chmod(work, 0o755)
            command = "unshare --user " + command
        if case.get("stdin"):
            command += f" < {case['stdin']}"
        if case.get("stdout"):
            command += f" > {case['stdout']}"
        start = time.monotonic()
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            child = subprocess.Popen(["bash", "-c", command], cwd=work, env=env, stdout=out, stderr=err)
            # wait4: this case's own peak memory (the largest process among the child and those it waited for).
            _, status, usage = os.wait4(child.pid, 0)
            child.returncode = os.waitstatus_to_exitcode(status)
            out.seek(0)
            err.seek(0)
            stdout, stderr = out.read(), err.read()
        seconds = time.monotonic() - start
        peak_mib = usage.ru_maxrss / 1024
        code = child.returncode
        output = (stdout + stderr).decode("utf-8", "replace")
        problems = []
        if code != case["exit"]:
            problems.append(f"exit {code}, expected {case['exit']}")
        for fragment in case.get("expect", []):
            if fragment not in output:
                problems.append(f"missing {fragment!r}")
        for fragment in case.get("absent", []):
            if fragment in output:
                problems.append(f"must not print {fragment!r}")
        if case.get("validate"):
            report = stdout
            if case.get("report"):
                with open(os.path.join(work, case["report"]), "rb") as f:
                    report = f.read()
            try:
                if case["validate"] == "xml":
                    xml.dom.minidom.parseString(report)
                else:
                    json.loads(report.decode("utf-8"))
            except Exception as e:  # noqa: BLE001 (any parse failure is the finding)
                problems.append(f"report is not well-formed {case['validate']}: {e}")
        if case.get("after"):
            a = subprocess.run(["bash", "-c", case["after"]], cwd=work, env=env, capture_output=True)
            if a.returncode != 0:
                problems.append(f"after-check failed: {case['after']}")
        return case["name"], problems, output, seconds, peak_mib
    finally:
        subprocess.run(["chmod", "-R", "u+rwx", folder], capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    binary = os.path.abspath(args[0])
    only = args[args.index("--only") + 1] if "--only" in args else ""
    with open(os.path.join(HERE, "manifest.toml"), "rb") as f:
        cases = tomllib.load(f)["case"]
    names = [c["name"] for c in cases]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        sys.exit(f"duplicate case names: {sorted(duplicates)}")
    # As root, permission cases run in a user namespace; where none can be made they are left out.
    no_permissions = os.geteuid() == 0 and subprocess.run(["unshare", "--user", "true"], capture_output=True).returncode
    chosen = [c for c in cases if only in c["name"] and not (no_permissions and c.get("not_as_root"))]
    failures = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        for name, problems, output, seconds, peak in pool.map(lambda c: run_case(binary, c), chosen):
            if "--figures" in args:
                print(f"{name:45s} {seconds:6.2f} s {peak:8.1f} MiB")
            if problems:
                failures += 1
                print(f"FAIL {name}: " + "; ".join(problems))
                print("  output: " + output[:1500].replace("\n", "\n  "))
    print(f"{len(chosen) - failures} of {len(chosen)} hostile cases hold" +
          (f" ({len(cases) - len(chosen)} left out)" if len(chosen) < len(cases) else ""))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
