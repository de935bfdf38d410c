#pragma once
// YAML front end: a Bridge config dump, an override file or a bare `model:` mapping -> config tree.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.hpp"
#include "core/value.hpp"

namespace mbl {

struct YamlLoadResult {
    Value root;                      // a Map on success
    std::vector<Diagnostic> errors;  // IN0xx diagnostics; non-empty means the file is unusable
    // What a directory walk judges an unusable file's shape by: its documents that are mappings, read despite the
    // errors (a stream of several documents, a tag OmegaConf refuses; none for a list or a lone value). `shape_read`
    // is false when the text could not be parsed at all (a syntax error), so its shape is not known.
    std::vector<Value> shapes;
    bool shape_read = false;
    bool stream = false;  // refused as a stream of several documents; read_stream_shapes reads them on demand
    bool ok() const { return errors.empty(); }
};

// Parses `text` (the contents of `file`). Never throws. Values carry Origin::File provenance spanning the
// `key: value` entry that set them, so a caret can underline it.
YamlLoadResult load_yaml(const std::string& file, std::string_view text, Origin origin = Origin::File);

// The mappings among the documents of a refused stream (`result.stream`) into `result.shapes`, for a directory walk to
// judge whether the file has a Bridge config's shape; read only when a walk asks, under the same limits.
void read_stream_shapes(const std::string& file, std::string_view text, YamlLoadResult& result,
                        Origin origin = Origin::File);

// How a plain (unquoted) YAML scalar reads: null, bool, int, float or string, as PyYAML resolves it.
Value parse_yaml_plain_scalar(const std::string& text);
// A fix's value as YAML reads it: a plain scalar or a flow list such as "[core_attn, moe]" (None when malformed).
Value parse_yaml_value(const std::string& text);

// The limits of core/limits.hpp a document is read under: yaml-depth (nesting deeper is refused with a diagnostic
// instead of recursing further), yaml-values and yaml-alias-bytes (aliases share nodes in yaml-cpp but are copied
// into the config tree, so a few lines of nested aliases, a "billion laughs", would otherwise expand without bound;
// a Bridge config dump holds a few thousand values, and each with its provenance costs a few hundred bytes, so the
// default keeps a file under 256 MB).

}  // namespace mbl
