#!/usr/bin/env python3
"""Generates schemas/mcore/classes/: Megatron Core's config classes at every revision the linter knows.

A development tool (Python standard library only); the linter reads what it writes and never runs it.

For each revision of schemas/mcore/index.json (a release tag's commit or a pinned commit, as the revision file
records it) it reads, from a git directory of Megatron-LM, the dataclasses Megatron Bridge's model providers build
on and every base class they inherit, and writes one file per revision:

  schemas/mcore/classes/<revision>.json   the commit, each class (module, file, line, bases) and its fields (type,
                                          nullable, Literal values, default, line); the recompute labels and the
                                          default recompute_modules where TransformerConfig.__post_init__ states them
  schemas/mcore/classes/fields.json       every field name: the classes declaring it, the first and last revision
                                          (index order) that have it, the revisions in between that lack it, and its
                                          type as the newest revision having it declares it

Usage: scripts/mcore_facts.py [--megatron GIT_DIR] [--bridge GIT_DIR] [--check] [--check-reader DUMPER] [--store DUMPER] [--bridge-checks DUMPER] [--bridge-precision DUMPER]
  --megatron      a Megatron-LM git directory holding every tag and pinned commit
                  (default /work/.mirror/NVIDIA+Megatron-LM/repo)
  --bridge        a Megatron Bridge git directory (default /work/.mirror/NVIDIA-NeMo+Megatron-Bridge/repo)
  --check         write nothing; exit 1 when a generated file differs from what is committed
  --bridge-checks DUMPER
                  write schemas/bridge/checks.json: Megatron Bridge's start-up (what runtime_config_update calls on
                  the config's sections and on the whole config), compiled from Bridge's src/ at 067f987 by the
                  linter's own compiler (DUMPER: build/tests/dump_bridge_checks), with the megatron/core its
                  3rdparty/Megatron-LM gitlink pins for the classes Bridge derives from Megatron Core's
  --bridge-precision DUMPER
                  write schemas/precision.json: Megatron Bridge's mixed-precision recipes at 067f987, each name its
                  registry holds with the fields of the MixedPrecisionConfig it returns, as the linter's own Python
                  front end resolves them in the tree (DUMPER: build/tests/dump_bridge_precision); the catalog for
                  files in no Bridge tree
  --store DUMPER  write schemas/mcore/facts/: the classes and checks of every commit scripts/mcore_commits.py's
                  fact_commits chooses (every core_v tag, every commit a Megatron Bridge branch or tag head pins, the
                  first commit of each month on main and dev since core_v0.12.0) and of the named revisions, in the
                  deduplicated layout of scripts/mcore_store.py; run scripts/mcore_commits.py after it
  --check-reader  write nothing; extract each revision's whole megatron/ tree and compare what the linter's own
                  reader (build/tests/dump_mcore_classes) reads from it with the committed facts, field by field

The classes read are the ones Megatron Bridge (src/megatron/bridge/models at 067f987) subclasses or composes:
  megatron.core.transformer.transformer_config: TransformerConfig, MLATransformerConfig
  megatron.core.transformer.heterogeneous.heterogeneous_config: HeterogeneousTransformerConfig
  megatron.training.models.gpt / .hybrid: GPTModelConfig, HybridModelConfig (the builder configs)
Their bases (ModelParallelConfig, ModelConfig) are followed through the modules' imports.
"""

import argparse
import ast
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCHEMAS = os.path.join(ROOT, "schemas", "mcore")
OUT = os.path.join(SCHEMAS, "classes")
BRIDGE_OUT = os.path.join(ROOT, "schemas", "bridge", "model_fields.json")
BRIDGE_CHECKS_OUT = os.path.join(ROOT, "schemas", "bridge", "checks.json")
PRECISION_OUT = os.path.join(ROOT, "schemas", "precision.json")

# (module, class): the classes Bridge providers build on; bases are found from the source.
ROOT_CLASSES = [
    ("megatron.core.transformer.transformer_config", "TransformerConfig"),
    ("megatron.core.transformer.transformer_config", "MLATransformerConfig"),
    ("megatron.core.transformer.heterogeneous.heterogeneous_config", "HeterogeneousTransformerConfig"),
    ("megatron.training.models.gpt", "GPTModelConfig"),
    ("megatron.training.models.hybrid", "HybridModelConfig"),
]
RECOMPUTE_CLASS = "TransformerConfig"
MCORE_CLASS_NAMES = {c for _, c in ROOT_CLASSES} | {"ModelParallelConfig", "ModelConfig"}

SCALARS = {"bool": "bool", "int": "int", "float": "float", "str": "str"}
LISTS = {"list", "List", "tuple", "Tuple", "Sequence", "set", "Set", "frozenset", "FrozenSet"}
DICTS = {"dict", "Dict", "Mapping", "MutableMapping"}
NOT_FIELDS = {"ClassVar", "InitVar"}


class Source:
    """Files of one commit of a git directory, read through one `git cat-file --batch` process."""

    def __init__(self, git_dir, commit, prefix=""):
        self.git_dir, self.commit, self.prefix = git_dir, commit, prefix
        self.cache = {}
        self.batch = subprocess.Popen(["git", "-C", git_dir, "cat-file", "--batch"], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE)

    def read(self, path):
        if path not in self.cache:
            self.batch.stdin.write(f"{self.commit}:{path}\n".encode())
            self.batch.stdin.flush()
            header = self.batch.stdout.readline().decode().split()
            if len(header) == 3 and header[1] == "blob":
                data = self.batch.stdout.read(int(header[2]) + 1)[:-1]
                self.cache[path] = data.decode(errors="replace")
            else:
                self.cache[path] = None
        return self.cache[path]

    def files(self, under):
        r = subprocess.run(["git", "-C", self.git_dir, "ls-tree", "-r", "--name-only", self.commit, under],
                           capture_output=True, text=True, check=True)
        return r.stdout.split()

    def module_file(self, module):
        base = self.prefix + module.replace(".", "/")
        for path in (base + ".py", base + "/__init__.py"):
            if self.read(path) is not None:
                return path
        return None

    def module_name(self, path):
        name = path[len(self.prefix):-3].replace("/", ".")
        return name[: -len(".__init__")] if name.endswith(".__init__") else name

    def close(self):
        self.batch.stdin.close()
        self.batch.wait()


class Module:
    def __init__(self, name, path, text):
        self.name, self.path = name, path
        try:
            self.tree = ast.parse(text)
        except SyntaxError:  # a newer Python's syntax: the module defines nothing here
            self.tree = ast.Module(body=[], type_ignores=[])
        self.package = name if path.endswith("__init__.py") else name.rpartition(".")[0]
        self.classes = {n.name: n for n in self.tree.body if isinstance(n, ast.ClassDef)}
        self.imported = {}  # local name -> (module, name or None for a module)
        for node in ast.walk(self.tree):
            if isinstance(node, ast.ImportFrom):
                base = self.absolute(node.module, node.level)
                for a in node.names:
                    self.imported[a.asname or a.name] = (base, a.name)
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname:
                        self.imported[a.asname] = (a.name, None)
                    else:
                        top = a.name.split(".")[0]
                        self.imported[top] = (top, None)

    def absolute(self, module, level):
        if not level:
            return module or ""
        parts = self.package.split(".")
        if level > 1:
            parts = parts[: len(parts) - (level - 1)]
        return ".".join(parts + ([module] if module else []))


class Reader:
    def __init__(self, source):
        self.source = source
        self.modules = {}

    def module(self, name):
        if name not in self.modules:
            path = self.source.module_file(name)
            self.modules[name] = Module(name, path, self.source.read(path)) if path else None
        return self.modules[name]

    def find_class(self, module_name, class_name, depth=0):
        """(Module, ClassDef) defining `class_name` as seen from `module_name`, following imports."""
        m = self.module(module_name)
        if m is None or depth > 8:
            return None
        if class_name in m.classes:
            return m, m.classes[class_name]
        if class_name in m.imported:
            mod, name = m.imported[class_name]
            if name is not None:
                return self.find_class(mod, name, depth + 1)
        return None

    def dotted(self, m, node):
        """A dotted name with its first part resolved through the module's imports."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        head = node.id
        if head in m.imported:
            mod, name = m.imported[head]
            head = mod if name is None else f"{mod}.{name}"
        return ".".join([head] + parts[::-1])

    def is_enum_class(self, m, name):
        found = self.find_class(m.name, name) if name not in m.classes else (m, m.classes[name])
        if not found:
            return False
        _, cls = found
        return any(ast.unparse(b).split(".")[-1] in ("Enum", "IntEnum", "StrEnum", "Flag") for b in cls.bases)


def field_type(node):
    """(type, nullable, literal values) of an annotation."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            return field_type(ast.parse(node.value, mode="eval").body)
        except SyntaxError:
            return "any", True, None
    if isinstance(node, ast.Constant) and node.value is None:
        return "none", True, None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return union_type([node.left, node.right])
    name = ast.unparse(node.value if isinstance(node, ast.Subscript) else node)
    short = name.split(".")[-1]
    if isinstance(node, ast.Subscript):
        args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if short == "Optional":
            t, _, lit = field_type(args[0])
            return t, True, lit
        if short == "Union":
            return union_type(args)
        if short == "Literal":
            values = [a.value for a in args if isinstance(a, ast.Constant)]
            nullable = None in values
            values = [v for v in values if v is not None]
            kinds = {type(v) for v in values}
            if kinds == {str}:
                return "str", nullable, values
            if kinds == {int}:
                return "int", nullable, None
            return "any", nullable, None
        if short == "Annotated":
            return field_type(args[0])
    if short in SCALARS and not isinstance(node, ast.Subscript):
        return SCALARS[short], False, None
    if short in LISTS:
        return "list", False, None
    if short in DICTS:
        return "dict", False, None
    if short == "Callable":
        return "callable", False, None
    if name in ("torch.dtype", "dtype"):
        return "dtype", False, None
    return "any", False, None


def union_type(args):
    parts = [field_type(a) for a in args]
    nullable = any(p[0] == "none" or p[1] for p in parts)
    kinds = [p for p in parts if p[0] != "none"]
    if len({p[0] for p in kinds}) == 1:
        lits = kinds[0][2] if len(kinds) == 1 else None
        return kinds[0][0], nullable, lits
    if {p[0] for p in kinds} == {"int", "float"}:
        return "float", nullable, None
    return "any", nullable, None


class NotLiteral(Exception):
    pass


def literal(reader, m, node):
    """The JSON value of a default expression; NotLiteral when it has none."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, (bool, int, float, str)) or node.value is None:
            return node.value
        raise NotLiteral
    if isinstance(node, (ast.List, ast.Tuple)):
        return [literal(reader, m, e) for e in node.elts]
    if isinstance(node, ast.Dict):
        out = {}
        for k, v in zip(node.keys, node.values):
            key = literal(reader, m, k) if k is not None else None
            if not isinstance(key, str):
                raise NotLiteral
            out[key] = literal(reader, m, v)
        return out
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = literal(reader, m, node.operand)
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise NotLiteral
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Add, ast.Sub, ast.Pow)):
        a, b = literal(reader, m, node.left), literal(reader, m, node.right)
        if any(isinstance(x, bool) or not isinstance(x, (int, float)) for x in (a, b)):
            raise NotLiteral
        if isinstance(node.op, ast.Mult):
            return a * b
        if isinstance(node.op, ast.Add):
            return a + b
        if isinstance(node.op, ast.Sub):
            return a - b
        return a**b
    # An enum member (`AttnBackend.auto`) is written as its name, as configs spell it.
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        if reader.is_enum_class(m, node.value.id):
            return node.attr
    raise NotLiteral


def default_of(reader, m, value):
    """{'default': v} / {'expr': source} / {'required': True}, and whether the field is an __init__ argument."""
    if value is None:
        return {"required": True}, True
    init = True
    if isinstance(value, ast.Call) and ast.unparse(value.func).split(".")[-1] == "field":
        kw = {k.arg: k.value for k in value.keywords}
        if "init" in kw and isinstance(kw["init"], ast.Constant):
            init = bool(kw["init"].value)
        if "default" in kw:
            value = kw["default"]
        elif "default_factory" in kw:
            factory = kw["default_factory"]
            name = ast.unparse(factory)
            if name in ("list", "tuple", "set"):
                return {"default": []}, init
            if name == "dict":
                return {"default": {}}, init
            if isinstance(factory, ast.Lambda):
                try:
                    return {"default": literal(reader, m, factory.body)}, init
                except NotLiteral:
                    return {"expr": ast.unparse(factory.body)}, init
            return {"expr": f"{name}()"}, init
        else:
            return ({"required": True} if init else {}), init
    try:
        return {"default": literal(reader, m, value)}, init
    except NotLiteral:
        dotted = reader.dotted(m, value) if isinstance(value, (ast.Attribute, ast.Name)) else None
        return {"expr": dotted or ast.unparse(value)}, init


def read_class(reader, m, cls):
    fields = {}
    for stmt in cls.body:
        if not isinstance(stmt, ast.AnnAssign) or not isinstance(stmt.target, ast.Name):
            continue
        ann = stmt.annotation
        head = ann.value if isinstance(ann, ast.Subscript) else ann
        if ast.unparse(head).split(".")[-1] in NOT_FIELDS:
            continue
        t, nullable, values = field_type(ann)
        entry = {"line": stmt.lineno, "type": "any" if t == "none" else t}
        if nullable:
            entry["nullable"] = True
        if values:
            entry["values"] = values
        d, init = default_of(reader, m, stmt.value)
        entry.update(d)
        if not init:
            entry["init"] = False
        fields[stmt.target.id] = entry
    return fields


def recompute_facts(m, cls):
    """Labels and default of recompute_modules where __post_init__ states them (None when it does not)."""
    post = next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "__post_init__"), None)
    if post is None:
        return None
    sets, out = {}, {}

    def is_modules(node):
        return ast.unparse(node) in ("self.recompute_modules", "set(self.recompute_modules)")

    for node in ast.walk(post):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name) and isinstance(node.value, (ast.Set, ast.List, ast.Tuple)):
                sets.setdefault(target.id, []).append(node)
            if ast.unparse(target) == "self.recompute_modules" and isinstance(node.value, ast.List):
                out["default_modules"] = [e.value for e in node.value.elts]
                out["default_modules_line"] = node.lineno
    # `set(self.recompute_modules) - allowed`: the nearest assignment of `allowed` above it is the label set.
    for node in ast.walk(post):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub) and is_modules(node.left):
            if isinstance(node.right, ast.Name) and node.right.id in sets:
                above = [a for a in sets[node.right.id] if a.lineno <= node.lineno]
                if above:
                    chosen = max(above, key=lambda a: a.lineno)
                    out["labels"] = [e.value for e in chosen.value.elts]
                    out["labels_line"] = chosen.lineno
            elif isinstance(node.right, ast.Set):
                out["labels"] = [e.value for e in node.right.elts]
                out["labels_line"] = node.lineno
    return out or None


def package_version(source):
    """megatron/core/package_info.py's MAJOR.MINOR.PATCH and PRE_RELEASE, as the package reports its version."""
    text = source.read("megatron/core/package_info.py") or ""
    parts = {}
    for node in ast.parse(text).body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            if isinstance(node.value, ast.Constant):
                parts[node.targets[0].id] = node.value.value
    if not {"MAJOR", "MINOR", "PATCH"} <= set(parts):
        return None
    return f"{parts['MAJOR']}.{parts['MINOR']}.{parts['PATCH']}{parts.get('PRE_RELEASE') or ''}"


def revision_commits():
    index = json.load(open(os.path.join(SCHEMAS, "index.json")))
    out = []
    for name in index["order"]:
        rev = json.load(open(os.path.join(SCHEMAS, f"{name}.json")))
        if "commit" in rev:
            out.append((name, rev["commit"], rev["commit"]))
        else:
            out.append((name, rev["tags"][rev["release"]], rev["release"]))
    return out


def generate(git_dir, name, commit, ref):
    reader = Reader(Source(git_dir, commit))
    classes, todo = {}, list(ROOT_CLASSES)
    recompute = None
    while todo:
        module_name, class_name = todo.pop(0)
        found = reader.find_class(module_name, class_name)
        if not found or class_name in classes:
            continue
        m, cls = found
        bases = []
        for b in cls.bases:
            base_name = ast.unparse(b).split(".")[-1]
            if base_name in ("object", "ABC") or isinstance(b, ast.Subscript):
                continue
            if reader.find_class(m.name, base_name):
                bases.append(base_name)
                todo.append((m.name, base_name))
        classes[class_name] = {
            "module": m.name,
            "file": m.path,
            "line": cls.lineno,
            "bases": bases,
            "fields": read_class(reader, m, cls),
        }
        if class_name == RECOMPUTE_CLASS:
            recompute = recompute_facts(m, cls)
            if recompute:
                recompute["file"] = m.path
    version = package_version(reader.source)
    reader.source.close()
    return {
        "revision": name,
        "ref": ref,
        "commit": commit,
        "package_version": version,
        "generated_by": "scripts/mcore_facts.py from the Megatron-LM source at this commit; do not edit",
        "recompute": recompute,
        "classes": dict(sorted(classes.items())),
    }


def dump(value):
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def render_revision(facts):
    """One field per line, so that a regenerated file diffs field by field."""
    lines = ["{"]
    for key in ("revision", "ref", "commit", "package_version", "generated_by", "recompute"):
        lines.append(f"  {dump(key)}: {dump(facts[key])},")
    lines.append('  "classes": {')
    names = list(facts["classes"])
    for i, name in enumerate(names):
        c = facts["classes"][name]
        head = {k: c[k] for k in ("module", "file", "line", "bases")}
        lines.append(f"    {dump(name)}: {dump(head)[:-1]}, \"fields\": {{")
        items = list(c["fields"].items())
        for j, (field, spec) in enumerate(items):
            lines.append(f"      {dump(field)}: {dump(spec)}{',' if j + 1 < len(items) else ''}")
        lines.append("    }}" + ("," if i + 1 < len(names) else ""))
    lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def standing_declaration(facts, field):
    """The declaration that stands for a field in a revision: TransformerConfig's or its base's, else the first
    class (by name) declaring it, as the linter's ClassFacts::any() picks it."""
    classes = facts["classes"]
    for name in ("TransformerConfig", "ModelParallelConfig"):
        if field in classes.get(name, {}).get("fields", {}):
            return classes[name]["fields"][field]
    return next(c["fields"][field] for c in classes.values() if field in c["fields"])


def render_history(all_facts, order):
    seen = {}
    for facts in all_facts:
        for cls_name, cls in facts["classes"].items():
            for field in cls["fields"]:
                entry = seen.setdefault(field, {"classes": [], "in": []})
                if cls_name not in entry["classes"]:
                    entry["classes"].append(cls_name)
                if facts["revision"] not in entry["in"]:
                    entry["in"].append(facts["revision"])
                entry["newest"] = facts
    lines = ["{", '  "generated_by": "scripts/mcore_facts.py; do not edit",', f'  "order": {dump(order)},',
             '  "fields": {']
    names = sorted(seen)
    for i, field in enumerate(names):
        present = seen[field]["in"]
        first, last = present[0], present[-1]
        span = order[order.index(first): order.index(last) + 1]
        entry = {"classes": sorted(seen[field]["classes"]), "first": first, "last": last}
        # The type as the newest revision having the field declares it.
        declared = standing_declaration(seen[field]["newest"], field)
        entry["type"] = declared["type"]
        if declared.get("nullable"):
            entry["nullable"] = True
        if declared.get("values"):
            entry["values"] = declared["values"]
        missing = [r for r in span if r not in present]
        if missing:
            entry["not_in"] = missing
        lines.append(f"    {dump(field)}: {dump(entry)}{',' if i + 1 < len(names) else ''}")
    lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


# --- Megatron Bridge: the fields its model classes declare ----------------------------------------------------------

BRIDGE_TREE = "src/megatron/bridge"
# Bridge revisions whose provider fields are all accepted under `model:` (the linter cannot tell a tree's Bridge
# version): the releases, and the commit the linter is measured on.
BRIDGE_REFS_PATTERN = r"^v\d+\.\d+\.\d+$"
BRIDGE_PIN = "067f987df"
MODEL_NAME_SUFFIXES = ("ModelProvider", "ModelConfig", "TransformerConfig")


def is_dataclass(cls):
    return any(ast.unparse(d).split("(")[0].split(".")[-1] == "dataclass" for d in cls.decorator_list)


def bridge_model_classes(reader, source):
    """(Module, ClassDef) of every dataclass under a models/ folder that is a model config: named like one (as the
    linter's Python front end tells them), or built on one."""
    found, verdict = [], {}

    def is_model(m, cls, depth=0):
        key = (m.name, cls.name)
        if key in verdict:
            return verdict[key]
        verdict[key] = cls.name.endswith(MODEL_NAME_SUFFIXES)
        for b in cls.bases:
            if verdict[key] or depth > 20:
                break
            name = ast.unparse(b.value if isinstance(b, ast.Subscript) else b).split(".")[-1]
            if name in m.imported and m.imported[name][0].startswith(("megatron.core", "megatron.training")):
                verdict[key] = name.endswith(MODEL_NAME_SUFFIXES) or m.imported[name][1] in MCORE_CLASS_NAMES
                continue
            base = reader.find_class(m.name, name)
            if base:
                verdict[key] = is_model(base[0], base[1], depth + 1)
        return verdict[key]

    for path in source.files(BRIDGE_TREE):
        if not path.endswith(".py") or "/models/" not in path:
            continue
        m = reader.module(source.module_name(path))
        if m is None:
            continue
        for cls in m.classes.values():
            if is_dataclass(cls) and is_model(m, cls):
                found.append((m, cls))
    return found


def bridge_refs(git_dir):
    tags = subprocess.run(["git", "-C", git_dir, "tag"], capture_output=True, text=True, check=True).stdout.split()
    releases = sorted((t for t in tags if re.match(BRIDGE_REFS_PATTERN, t)),
                      key=lambda t: tuple(int(x) for x in t[1:].split(".")))
    return releases + [BRIDGE_PIN]


def generate_bridge(git_dir):
    fields, refs, classes, types = {}, {}, {}, {}
    for ref in bridge_refs(git_dir):
        commit = subprocess.run(["git", "-C", git_dir, "rev-parse", ref + "^{commit}"], capture_output=True,
                                text=True, check=True).stdout.strip()
        refs[ref] = commit
        source = Source(git_dir, commit, prefix="src/")
        reader = Reader(source)
        for m, cls in bridge_model_classes(reader, source):
            classes.setdefault(cls.name, set()).add(m.name)
            for name, spec in read_class(reader, m, cls).items():
                entry = {"type": spec["type"]}
                if spec.get("nullable"):
                    entry["nullable"] = True
                entry.update({"class": cls.name, "source": f"{m.path}:{spec['line']}", "ref": ref})
                first = fields.get(name, {}).get("first", ref)
                types.setdefault(name, set()).add(spec["type"])
                # The latest revision's declaration stands for the field; `first` is when Bridge first had it.
                fields[name] = dict(entry, first=first)
        source.close()
    for name, declared in types.items():
        # Classes that declare a field with different types (Llama 3.1's `scale_factor: float`, Llama 3.2 3B's `int`)
        # accept what any of them does: int and float widen to float, anything else to any.
        if len(declared) > 1:
            fields[name]["type"] = "float" if declared == {"int", "float"} else "any"
    return refs, {name: sorted(modules) for name, modules in sorted(classes.items())}, fields


def render_bridge(refs, classes, fields):
    lines = ["{", '  "generated_by": "scripts/mcore_facts.py from Megatron Bridge\'s source; do not edit",',
             '  "what": "every field a dataclass model config of Megatron Bridge declares (providers, builder configs, '
             'transformer configs) at each ref below, with the modules defining each such class; the source and '
             'type of a field are those of the latest ref that has it",',
             f'  "refs": {dump(refs)},', '  "classes": {']
    for i, name in enumerate(classes):
        lines.append(f"    {dump(name)}: {dump(classes[name])}{',' if i + 1 < len(classes) else ''}")
    lines += ["  },", '  "fields": {']
    names = sorted(fields)
    for i, name in enumerate(names):
        lines.append(f"    {dump(name)}: {dump(fields[name])}{',' if i + 1 < len(names) else ''}")
    lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def check_reader(git_dir, dumper):
    """The run-time reader (C++, tree-sitter) against the generator, on whole trees: every difference is printed."""
    import tempfile
    differences = 0
    for name, commit, ref in revision_commits():
        expected = json.load(open(os.path.join(OUT, f"{name}.json")))
        with tempfile.TemporaryDirectory() as tmp:
            extract_tree(git_dir, commit, tmp)
            got = json.loads(subprocess.run([dumper, tmp, name], capture_output=True, text=True, check=True).stdout)
        for key in ("default_modules", "default_modules_line", "labels", "labels_line"):
            if got["recompute"].get(key) != (expected["recompute"] or {}).get(key):
                differences += 1
                print(f"{name}: recompute {key}: read {got['recompute'].get(key)}, generated "
                      f"{(expected['recompute'] or {}).get(key)}")
        for cls in sorted(set(got["classes"]) | set(expected["classes"])):
            a, b = got["classes"].get(cls), expected["classes"].get(cls)
            if a is None or b is None:
                differences += 1
                print(f"{name}: class {cls}: {'only generated' if a is None else 'only read'}")
                continue
            for key in ("module", "file", "line", "bases"):
                if a[key] != b[key]:
                    differences += 1
                    print(f"{name}: {cls} {key}: read {a[key]}, generated {b[key]}")
            for field in sorted(set(a["fields"]) | set(b["fields"])):
                if a["fields"].get(field) != b["fields"].get(field):
                    differences += 1
                    print(f"{name}: {cls}.{field}: read {a['fields'].get(field)}, generated {b['fields'].get(field)}")
        print(f"{name} ({commit[:12]}): {sum(len(c['fields']) for c in got['classes'].values())} fields read")
    print(f"{differences} differences")
    return 1 if differences else 0


def extract_tree(git_dir, commit, tmp, folder="megatron"):
    """The repository's `folder` (Megatron-LM's megatron/ by default) at `commit`, written under `tmp`."""
    import tarfile
    archive = subprocess.run(["git", "-C", git_dir, "archive", commit, folder], capture_output=True,
                             check=True).stdout
    tar_path = os.path.join(tmp, "tree.tar")
    with open(tar_path, "wb") as f:
        f.write(archive)
    with tarfile.open(tar_path) as t:
        t.extractall(tmp)


STORE_OUT = os.path.join(SCHEMAS, "facts")
CACHE = os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "mbridge-lint", "mcore-checks")


def compiled_checks(git_dir, dumper, base, commit):
    """DUMPER's checks of the tree at `commit` (the class list of the named revision `base`), kept in a cache keyed
    by the dumper's bytes: the store's ~400 commits take minutes to compile, a rerun seconds."""
    import hashlib
    import tempfile
    with open(dumper, "rb") as f:
        key = hashlib.sha256(f.read()).hexdigest()[:16]
    path = os.path.join(CACHE, key, f"{commit}-{base}.json")
    if os.path.exists(path):
        return open(path).read()
    with tempfile.TemporaryDirectory() as tmp:
        extract_tree(git_dir, commit, tmp)
        r = subprocess.run([dumper, tmp, base, commit], capture_output=True, text=True)
    text = r.stdout if r.returncode == 0 else ""  # a tree the compiler cannot read: no checks, said below
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    return text


def write_store(git_dir, bridge_dir, dumper, check_only):
    """schemas/mcore/facts/: the classes and checks of every commit mcore_commits.fact_commits chooses, in the
    deduplicated layout of scripts/mcore_store.py."""
    import time
    import mcore_commits
    import mcore_store
    named = mcore_commits.revision_commits()
    chosen = mcore_commits.fact_commits(git_dir, bridge_dir)
    for commit in named.values():
        chosen.setdefault(commit, "named revision")
    ancestry = mcore_commits.Ancestry(git_dir, list(chosen) + list(named.values()))
    store, rows, skipped = mcore_store.Store(), [], []
    dates = {h: subprocess.run(["git", "-C", git_dir, "log", "-1", "--format=%cs", h], capture_output=True,
                               text=True, check=True).stdout.strip() for h in chosen}
    started = time.time()
    for commit in sorted(chosen, key=lambda h: (dates[h], h)):
        where = chosen[commit]
        base = mcore_commits.nearest(ancestry, commit, named)[0]
        name = next((n for n, c in named.items() if c == commit), None)
        name = name or (where if where.startswith("core_v") else commit[:12])
        classes = generate(git_dir, name, commit, where)
        text = compiled_checks(git_dir, dumper, base, commit)
        if not classes["classes"] or not text:
            skipped.append(f"{where} {commit[:12]}")
            continue
        program = json.loads(text)
        recipe = {"checks": store.encode_checks(program), "classes": store.encode_classes(classes)}
        # The store must give back exactly what was put in.
        if mcore_store.canonical(store.decode_checks(recipe["checks"], commit)) != mcore_store.canonical(program):
            sys.exit(f"{commit}: the stored checks do not decode to the compiled ones")
        if not mcore_store.same_classes(store.decode_classes(recipe["classes"]), classes):
            sys.exit(f"{commit}: the stored classes do not decode to the generated ones")
        rows.append([commit, dates[commit], where, base, name, store.put(recipe)])
    pieces, index = mcore_store.render(store, rows)
    print(f"{len(rows)} commits ({time.time() - started:.0f} s), {len(store.pieces)} pieces, "
          f"{len(pieces) + len(index)} bytes; no facts for {len(skipped)}: {', '.join(skipped)}")
    stale = []
    for file, text in (("pieces.jsonl", pieces), ("index.jsonl", index)):
        path = os.path.join(STORE_OUT, file)
        old = open(path).read() if os.path.exists(path) else None
        if old != text:
            stale.append(os.path.relpath(path, ROOT))
            if not check_only:
                os.makedirs(STORE_OUT, exist_ok=True)
                with open(path, "w") as f:
                    f.write(text)
    if check_only and stale:
        print("out of date: " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


def write_generated(path, text, check_only):
    """Writes a generated file unless it is current; with check_only, says it is out of date (exit status 1)."""
    old = open(path).read() if os.path.exists(path) else None
    if old == text:
        return 0
    if check_only:
        print(f"out of date: {os.path.relpath(path, ROOT)}", file=sys.stderr)
        return 1
    with open(path, "w") as f:
        f.write(text)
    return 0


def write_bridge_checks(git_dir, dumper, check_only, megatron_dir):
    """schemas/bridge/checks.json: Megatron Bridge's start-up at BRIDGE_PIN (its section setups and whole-config
    validation), compiled by the linter's own compiler (parser/bridge/mcore_checks.cpp, through DUMPER =
    build/tests/dump_bridge_checks) from Bridge's src/ tree, the route a Bridge checkout takes at lint time; the
    config classes Bridge derives from Megatron Core's read with the megatron/core its 3rdparty/Megatron-LM gitlink
    pins."""
    import tempfile
    commit = subprocess.run(["git", "-C", git_dir, "rev-parse", BRIDGE_PIN + "^{commit}"], capture_output=True,
                            text=True, check=True).stdout.strip()
    pinned = subprocess.run(["git", "-C", git_dir, "rev-parse", commit + ":3rdparty/Megatron-LM"],
                            capture_output=True, text=True, check=True).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        extract_tree(git_dir, commit, tmp, BRIDGE_TREE)
        mcore = os.path.join(tmp, "mcore")
        os.makedirs(mcore)
        extract_tree(megatron_dir, pinned, mcore, "megatron/core")
        text = subprocess.run([dumper, os.path.join(tmp, "src"), commit, mcore], capture_output=True, text=True,
                              check=True).stdout
    program = json.loads(text)
    kinds = {}
    for site in program["sites"]:
        kinds[site["kind"]] = kinds.get(site["kind"], 0) + 1
    print(f"Megatron Bridge {commit[:12]}: steps {[s['function'] for s in program['steps']]}, "
          f"{len(program['functions'])} functions, sites {kinds}")
    return write_generated(BRIDGE_CHECKS_OUT, text, check_only)


def write_bridge_precision(git_dir, dumper, check_only):
    """schemas/precision.json: every mixed-precision recipe name Megatron Bridge registers at BRIDGE_PIN with the
    fields its MixedPrecisionConfig has, resolved by the linter's own Python front end (DUMPER =
    build/tests/dump_bridge_precision) in Bridge's src/ tree, as a file inside a checkout is resolved at lint time."""
    import tempfile
    commit = subprocess.run(["git", "-C", git_dir, "rev-parse", BRIDGE_PIN + "^{commit}"], capture_output=True,
                            text=True, check=True).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        extract_tree(git_dir, commit, tmp, BRIDGE_TREE)
        dumped = json.loads(subprocess.run([dumper, os.path.join(tmp, "src"), commit], capture_output=True,
                                           text=True, check=True).stdout)
    recipes = {name: {"fields": r["fields"]} for name, r in sorted(dumped["recipes"].items())}
    doc = {"generated_by": "scripts/mcore_facts.py --bridge-precision build/tests/dump_bridge_precision",
           "source": f"Megatron Bridge {commit} src/megatron/bridge/training/mixed_precision.py: the names its "
                     "registry (MIXED_PRECISION_RECIPES) holds and the MixedPrecisionConfig each returns",
           "commit": commit, "recipes": recipes}
    lines = ["{"]
    head = [k for k in doc if k != "recipes"]
    for k in head:
        lines.append(f"  {json.dumps(k)}: {json.dumps(doc[k])},")
    lines.append('  "recipes": {')
    for i, (name, r) in enumerate(recipes.items()):
        comma = "," if i + 1 < len(recipes) else ""
        lines.append(f"    {json.dumps(name)}: {json.dumps(r, sort_keys=True)}{comma}")
    lines.append("  }")
    lines.append("}")
    text = "\n".join(lines) + "\n"
    print(f"Megatron Bridge {commit[:12]}: {len(recipes)} mixed-precision recipe names")
    return write_generated(PRECISION_OUT, text, check_only)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--megatron", default="/work/.mirror/NVIDIA+Megatron-LM/repo")
    parser.add_argument("--bridge", default="/work/.mirror/NVIDIA-NeMo+Megatron-Bridge/repo")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--check-reader", metavar="DUMPER")
    parser.add_argument("--bridge-checks", metavar="DUMPER")
    parser.add_argument("--bridge-precision", metavar="DUMPER")
    parser.add_argument("--store", metavar="DUMPER")
    args = parser.parse_args()
    if args.store:
        return write_store(args.megatron, args.bridge, args.store, args.check)
    if args.bridge_precision:
        return write_bridge_precision(args.bridge, args.bridge_precision, args.check)
    if args.bridge_checks:
        return write_bridge_checks(args.bridge, args.bridge_checks, args.check, args.megatron)
    if args.check_reader:
        return check_reader(args.megatron, args.check_reader)
    revisions = revision_commits()
    outputs, all_facts = {}, []
    for name, commit, ref in revisions:
        facts = generate(args.megatron, name, commit, ref)
        if not facts["classes"]:
            sys.exit(f"no config class found at {ref} ({commit}) in {args.megatron}")
        all_facts.append(facts)
        outputs[os.path.join(OUT, f"{name}.json")] = render_revision(facts)
    outputs[os.path.join(OUT, "fields.json")] = render_history(all_facts, [r[0] for r in revisions])
    outputs[BRIDGE_OUT] = render_bridge(*generate_bridge(args.bridge))
    stale = []
    for path, text in outputs.items():
        old = open(path).read() if os.path.exists(path) else None
        if old != text:
            stale.append(os.path.relpath(path, ROOT))
            if not args.check:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w") as f:
                    f.write(text)
    if args.check and stale:
        print("out of date: " + ", ".join(stale), file=sys.stderr)
        return 1
    print(f"{len(outputs)} files {'checked' if args.check else 'written'}"
          + (f"; changed: {', '.join(stale)}" if stale else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
