"""The store of Megatron Core facts by commit (schemas/mcore/facts/): encoding and decoding.

A development-tool module (Python standard library only) for scripts/mcore_facts.py and scripts/mcore_commits.py;
core/fact_store.cpp is the linter's decoder of the same format.

The facts of one commit are two documents: its config classes (the layout of schemas/mcore/classes/<rev>.json) and
its compiled checks (a post_init::Program's JSON). Consecutive commits share nearly all of both, but a
line inserted near the top of transformer_config.py moves the line of everything below it, so the documents are cut
into pieces whose lines are relative:

  pieces.jsonl   one JSON value a line, each stored once (content-addressed: the line number is the piece's id):
                 a statement of a compiled function (its own line 0; the blocks inside it are sequences, their lines
                 relative to it; a raise or warning site it owns is inlined, its line relative too), a function's
                 head (name, file, parameters), a class field (its name and spec, without its line), a class's head,
                 a chunk, and the small tables (entry points, enums, recompute labels without their lines)
  index.jsonl    one commit a line: [hash, date, where, base, name, recipe]; `base` is the named revision
                 (schemas/mcore/<base>.json) whose hand-written facts the commit takes, `name` what the linter calls
                 it (its tag, else its first 12 hex digits), `recipe` the piece saying how its documents are built

A sequence (a block of statements, a class's fields) is a list of [chunk, line]: a chunk is a piece listing
[item, line offset from the chunk's first item]. Chunks end after an item whose id hashes to 0 mod CHUNK, so an
edit changes the chunk around it and the chunks after it are the same pieces again (content-defined chunking).

The recipe:  {"checks": {"entries": piece, "enums": piece, "functions": [[head, sequence], ...],
                         "sites": [[function index, count], ...]},
              "classes": {"package_version": str, "recompute": [piece, default_modules_line, labels_line] or null,
                          "classes": [[head, line, sequence], ...]}}
Sites are numbered in the order the compiler met them; `sites` restores it: runs of so many sites of one function
(each function's own in the order its body states them).
"""

import json
import zlib

CHUNK = 8
BLOCK_KEYS = ("b", "x")  # a statement's nested blocks: body, else


def canonical(value):
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


class Store:
    def __init__(self, pieces=None):
        self.pieces = list(pieces or [])
        self.ids = {text: i for i, text in enumerate(self.pieces)}

    def put(self, value):
        text = canonical(value)
        if text not in self.ids:
            self.ids[text] = len(self.pieces)
            self.pieces.append(text)
        return self.ids[text]

    def get(self, i):
        return json.loads(self.pieces[i])

    # -- sequences ------------------------------------------------------------------------------------------------
    def sequence(self, items):
        """[(piece id, line)] -> [[chunk id, line of its first item]]."""
        out, chunk = [], []
        for pid, line in items:
            chunk.append((pid, line))
            if zlib.crc32(self.pieces[pid].encode()) % CHUNK == 0:
                out.append(self.close(chunk))
                chunk = []
        if chunk:
            out.append(self.close(chunk))
        return out

    def close(self, chunk):
        first = chunk[0][1]
        return [self.put([[pid, line - first] for pid, line in chunk]), first]

    def items(self, seq):
        for cid, first in seq:
            for pid, offset in self.get(cid):
                yield pid, first + offset

    # -- checks ---------------------------------------------------------------------------------------------------
    def encode_block(self, block, base, sites, fn):
        items = []
        for stmt in block:
            line = stmt["l"]
            piece = {k: v for k, v in stmt.items() if k not in ("l", "site") + BLOCK_KEYS}
            for key in BLOCK_KEYS:
                if key in stmt:
                    piece[key] = self.encode_block(stmt[key], line, sites, fn)
            if "site" in stmt:
                site = dict(sites[stmt["site"]])
                if site.get("function") != fn["name"] or site.get("file") != fn["file"]:
                    raise ValueError(f"site {stmt['site']} is not {fn['name']}'s own")
                del site["function"], site["file"]
                site["line"] -= line
                piece["site"] = site
            items.append((self.put(piece), line - base))
        return self.sequence(items)

    def decode_block(self, seq, base, fn, found):
        out = []
        for pid, offset in self.items(seq):
            piece = self.get(pid)
            line = base + offset
            stmt = {k: v for k, v in piece.items() if k not in ("site",) + BLOCK_KEYS}
            stmt["l"] = line
            for key in BLOCK_KEYS:
                if key in piece:
                    stmt[key] = self.decode_block(piece[key], line, fn, found)
            if "site" in piece:
                site = dict(piece["site"], function=fn["name"], file=fn["file"])
                site["line"] += line
                stmt["site"] = len(found)  # the function's own number, made global by the recipe's runs
                found.append((stmt, site))
            out.append(stmt)
        return out

    def encode_checks(self, program):
        sites = program["sites"]
        names = list(program["functions"])
        owner = [s["function"] for s in sites]
        # Each function's sites in the order its body states them must be their global order restricted to it.
        runs = []
        for name in owner:
            index = names.index(name)
            if runs and runs[-1][0] == index:
                runs[-1][1] += 1
            else:
                runs.append([index, 1])
        functions = []
        for name in names:
            f = program["functions"][name]
            head = {"name": name, **{k: v for k, v in f.items() if k != "body"}}
            functions.append([self.put(head), self.encode_block(f["body"], 0, sites, head)])
        recipe = {"entries": self.put(program["entries"]), "enums": self.put(program.get("enums", {})),
                  "functions": functions, "sites": runs}
        if "steps" in program:
            raise ValueError("a Megatron Core program has no start-up steps")
        return recipe

    def decode_checks(self, recipe, commit):
        functions, owned = {}, []
        for head_id, seq in recipe["functions"]:
            head = self.get(head_id)
            found = []
            body = self.decode_block(seq, 0, head, found)
            functions[head["name"]] = dict({k: v for k, v in head.items() if k != "name"}, body=body)
            owned.append(found)
        sites, taken = [], [0] * len(owned)
        for index, count in recipe["sites"]:
            for stmt, site in owned[index][taken[index]:taken[index] + count]:
                stmt["site"] = len(sites)
                sites.append(site)
            taken[index] += count
        if taken != [len(f) for f in owned]:
            raise ValueError("the site runs do not cover every site")
        out = {"commit": commit, "entries": self.get(recipe["entries"])}
        enums = self.get(recipe["enums"])
        if enums:
            out["enums"] = enums
        out["functions"] = dict(sorted(functions.items()))
        out["sites"] = sites
        return out

    # -- classes --------------------------------------------------------------------------------------------------
    def encode_classes(self, facts):
        recompute = facts["recompute"]
        if recompute is not None:
            rest = {k: v for k, v in recompute.items() if not k.endswith("_line")}
            recompute = [self.put(rest), recompute.get("default_modules_line"), recompute.get("labels_line")]
        classes = []
        for name, c in facts["classes"].items():
            head = {"name": name, **{k: c[k] for k in ("module", "file", "bases")}}
            items = [(self.put({"name": f, **{k: v for k, v in spec.items() if k != "line"}}), spec["line"])
                     for f, spec in c["fields"].items()]
            classes.append([self.put(head), c["line"], self.sequence(items)])
        return {"package_version": facts["package_version"], "recompute": recompute, "classes": classes}

    def decode_classes(self, recipe):
        recompute = None
        if recipe["recompute"] is not None:
            piece, default_line, labels_line = recipe["recompute"]
            recompute = self.get(piece)
            if default_line is not None:
                recompute["default_modules_line"] = default_line
            if labels_line is not None:
                recompute["labels_line"] = labels_line
        classes = {}
        for head_id, line, seq in recipe["classes"]:
            head = self.get(head_id)
            fields = {}
            for pid, field_line in self.items(seq):
                spec = self.get(pid)
                name = spec.pop("name")
                fields[name] = dict(spec, line=field_line)
            name = head.pop("name")
            classes[name] = dict(head, line=line, fields=fields)
        return {"package_version": recipe["package_version"], "recompute": recompute, "classes": classes}


def same_classes(a, b):
    """Whether two class documents state the same facts (key order aside)."""
    keys = ("package_version", "recompute", "classes")
    return canonical({k: a[k] for k in keys}) == canonical({k: b[k] for k in keys})


def read(folder):
    """(Store, [index rows]) from a schemas/mcore/facts folder."""
    import os
    pieces_path, index_path = os.path.join(folder, "pieces.jsonl"), os.path.join(folder, "index.jsonl")
    if not os.path.exists(index_path):
        return Store(), []
    with open(pieces_path) as f:
        pieces = [line.rstrip("\n") for line in f]
    with open(index_path) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return Store(pieces), rows


def render(store, rows):
    """The two files' text: (pieces.jsonl, index.jsonl)."""
    return ("".join(p + "\n" for p in store.pieces),
            "".join(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n" for row in rows))
