#!/usr/bin/env python3
"""Writes the Megatron Core excerpts under this folder from a Megatron-LM git directory (standard library only).

Each excerpt keeps, verbatim, the statements named below of Megatron Core's config classes at two revisions, so that
tests/python/test_mcore_source.cpp can read them with the linter's Python front end and compare what it reads with
the facts bundled for those revisions (schemas/mcore/classes/), without a Megatron-LM checkout. Every file names the
commit and the source lines it was cut from.

Usage: tests/data/mcore_source/make_excerpts.py [GIT_DIR]   (default /work/.mirror/NVIDIA+Megatron-LM/repo)
"""

import ast
import os
import subprocess
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
REVISIONS = {  # folder: (revision name in schemas/mcore, commit)
    "0.16": "3bec9aa97dda898d16ff5a89bac0ed2b6682b172",  # core_v0.16.0
    "dev": "b3b1e2d793c596c2fa61076d001ab93f294e4e87",  # Megatron Bridge's dev pin
}
FIELDS = {
    "megatron/core/model_parallel_config.py": {
        "ModelParallelConfig": ["tensor_model_parallel_size", "virtual_pipeline_model_parallel_size",
                                "sequence_parallel", "params_dtype", "pipeline_dtype"],
    },
    "megatron/core/transformer/transformer_config.py": {
        "TransformerConfig": ["num_layers", "attention_backend", "activation_func", "normalization",
                              "multi_latent_attention", "recompute_granularity", "recompute_modules", "fp8",
                              "moe_layer_recompute", "cuda_graph_scope", "enable_hyper_connections",
                              "mhc_recompute_layer_num", "offload_modules", "min_offloaded_tensor_size"],
        "MLATransformerConfig": ["multi_latent_attention", "q_lora_rank", "normalization", "rotary_base"],
    },
}
WHOLE_CLASSES = {"megatron/core/transformer/enums.py": ["AttnBackend"]}
IMPORTS = {"dataclasses", "typing", "torch", "torch.nn.functional", "megatron.core.transformer.enums",
           "model_parallel_config", "enum"}


def show(git_dir, commit, path):
    return subprocess.run(["git", "-C", git_dir, "show", f"{commit}:{path}"], capture_output=True, text=True,
                          check=True).stdout


def span(lines, node):
    return "\n".join(lines[node.lineno - 1: node.end_lineno])


def header(commit, path, taken):
    return (f"# Excerpt of NVIDIA/Megatron-LM {path} at {commit}: the statements at lines {taken}, verbatim\n"
            f"# (re-indented where a statement left its block); written by tests/data/mcore_source/make_excerpts.py.\n")


def imports(tree, lines, taken):
    out = []
    for node in tree.body:
        if isinstance(node, ast.Import) and any(a.name in IMPORTS for a in node.names):
            out.append(span(lines, node))
        elif isinstance(node, ast.ImportFrom) and (node.module or "") in IMPORTS:
            out.append(span(lines, node))
        else:
            continue
        taken.append(f"{node.lineno}-{node.end_lineno}")
    return out


def recompute_block(cls, lines, taken):
    """__post_init__'s default of recompute_modules and the label set it checks them against."""
    post = next(f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "__post_init__")
    nodes = list(ast.walk(post))
    default = next(n for n in nodes if isinstance(n, ast.If) and ast.unparse(n.test) == "self.recompute_modules is None")
    check = next(n for n in nodes if isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == "invalid_modules"
                 and "self.recompute_modules" in ast.unparse(n.value))
    labels = max((n for n in nodes if isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == "allowed_modules"
                  and n.lineno < check.lineno), key=lambda n: n.lineno)
    body = []
    for p in (default, labels, check):
        taken.append(f"{p.lineno}-{p.end_lineno}")
        body.append(textwrap.indent(textwrap.dedent(span(lines, p)), " " * 8))
    return "    def __post_init__(self):\n" + "\n".join(body)


def excerpt(git_dir, commit, path, classes):
    text = show(git_dir, commit, path)
    lines, tree = text.split("\n"), ast.parse(text)
    taken, out = [], []
    out += imports(tree, lines, taken)
    for node in tree.body:
        if not isinstance(node, ast.ClassDef) or node.name not in classes:
            continue
        first = node.decorator_list[0].lineno if node.decorator_list else node.lineno
        taken.append(f"{first}-{node.lineno}")
        body = ["\n".join(lines[first - 1: node.lineno])]
        wanted = classes[node.name]
        for stmt in node.body:
            if isinstance(stmt, ast.AnnAssign) and stmt.target.id in wanted:
                taken.append(f"{stmt.lineno}-{stmt.end_lineno}")
                body.append(span(lines, stmt))
        if node.name == "TransformerConfig":
            body.append(recompute_block(node, lines, taken))
        out.append("\n".join(body))
    return header(commit, path, ", ".join(taken)) + "\n" + "\n\n\n".join(out) + "\n"


def whole(git_dir, commit, path, names):
    text = show(git_dir, commit, path)
    lines, tree = text.split("\n"), ast.parse(text)
    taken, out = [], imports(tree, lines, [])
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name in names:
            taken.append(f"{node.lineno}-{node.end_lineno}")
            out.append(span(lines, node))
    return header(commit, path, ", ".join(taken)) + "\n" + "\n\n\n".join(out) + "\n"


def main():
    git_dir = sys.argv[1] if len(sys.argv) > 1 else "/work/.mirror/NVIDIA+Megatron-LM/repo"
    for folder, commit in REVISIONS.items():
        files = {p: excerpt(git_dir, commit, p, c) for p, c in FIELDS.items()}
        files.update({p: whole(git_dir, commit, p, n) for p, n in WHOLE_CLASSES.items()})
        info = show(git_dir, commit, "megatron/core/package_info.py")
        files["megatron/core/package_info.py"] = header(commit, "megatron/core/package_info.py", "1-8") + "\n".join(
            info.split("\n")[:8]) + "\n"
        for path, text in files.items():
            target = os.path.join(HERE, folder, path)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "w") as f:
                f.write(text)
    print("written:", ", ".join(REVISIONS))


if __name__ == "__main__":
    main()
