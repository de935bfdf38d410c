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
    bool ok() const { return errors.empty(); }
};

// Parses `text` (the contents of `file`). Never throws. Values carry Origin::File provenance spanning the
// `key: value` entry that set them, so a caret can underline it.
YamlLoadResult load_yaml(const std::string& file, std::string_view text, Origin origin = Origin::File);

// How a plain (unquoted) YAML scalar reads: null, bool, int, float or string, as PyYAML resolves it.
Value parse_yaml_plain_scalar(const std::string& text);
// A fix's value as YAML reads it: a plain scalar or a flow list such as "[core_attn, moe]" (None when malformed).
Value parse_yaml_value(const std::string& text);

// Nesting deeper than this is refused with a diagnostic instead of recursing further.
inline constexpr int kMaxYamlDepth = 200;
// Values one document may expand to. Aliases share nodes in yaml-cpp but are copied into the config tree, so a few
// lines of nested aliases ("billion laughs") would otherwise expand without bound. A Bridge config dump holds a few
// thousand; each value with its provenance costs a few hundred bytes, so the limit keeps a file under 256 MB.
inline constexpr std::size_t kMaxYamlValues = 250'000;

// Text (scalars and keys) one document may expand to, aliases counted at each use. A file is at most 16 MiB.
inline constexpr std::size_t kMaxYamlBytes = std::size_t{64} << 20;

}  // namespace mbl
