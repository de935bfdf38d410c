// The documentation of the input-error codes (IN0xx, core/input_errors.hpp), in the rules' format: `mbridge-lint
// explain IN004` prints it and docs/rules.md lists it after the rules. An input error is not a rule (nothing to
// select or suppress); the code says why the linter could not use a file.
#include "core/input_errors.hpp"
#include "rules/registry.hpp"

namespace mbl {

namespace {

RuleInfo input_error_info(InputError kind, Severity severity, std::string_view summary, std::string_view doc) {
    return RuleInfo{input_error_code(kind), input_error_name(kind), severity, summary, doc};
}

}  // namespace

const std::vector<RuleInfo>& input_error_docs() {
    static const std::vector<RuleInfo> docs = {
        input_error_info(InputError::Unreadable, Severity::Error, "the file cannot be read", R"md(## What it does
Reports a file that cannot be opened or read, or that is larger than the linter reads (16 MiB).

## Why is this bad?
Nothing in the file can be checked; the linter exits with code 2 instead of passing it silently.

## Example
```sh
mbridge-lint check configs/missing.yaml
```

## Use instead
```sh
mbridge-lint check configs/run.yaml   # a readable file
```
)md"),
        input_error_info(InputError::Syntax, Severity::Error, "the file is not valid YAML, Python or UTF-8",
                         R"md(## What it does
Reports a YAML or Python syntax error, or text that is not UTF-8, at the place the parser stopped. YAML is read as
PyYAML's safe loader (and so OmegaConf) reads it: a character its reader refuses (a NUL or another control
character, even inside quotes) and a tag it cannot construct (`!!python/name:`, `!!python/object`, a local `!tag`)
are syntax errors too.

## Why is this bad?
Megatron Bridge could not load the file either; nothing after the error can be checked.

## Example
```yaml
model:
  recompute_granularity: [full
```

## Use instead
```yaml
model:
  recompute_granularity: full
```
)md"),
        input_error_info(InputError::NotAMapping, Severity::Error, "a config or section is not a mapping",
                         R"md(## What it does
Reports a config whose top level, or a section such as `model:`, is a list or a scalar instead of a mapping.

## Why is this bad?
Megatron Bridge reads sections as mappings of field names to values; anything else fails when the config is built.

## Example
```yaml
model:
  - recompute_granularity: full
```

## Use instead
```yaml
model:
  recompute_granularity: full
```
)md"),
        input_error_info(InputError::UnknownKey, Severity::Error, "a key is not a field of its section",
                         R"md(## What it does
Reports a key that is no field of its section (of the model config at the selected Megatron Core revision, or of
`.mbridge-lint.toml`), with the closest known name ("did you mean").

It is an error where the job is refused: a command-line override of a key that does not exist (Hydra's struct mode
refuses it), a keyword argument a dataclass does not declare (Python raises `TypeError`), a key of
`.mbridge-lint.toml`. It is a warning where the key is accepted and has no effect: a key of a YAML config or
`--config-file` overlay (Megatron Bridge skips keys its config object lacks, and logs it), an attribute a Python recipe
assigns (`cfg.model.x = ...`: Python accepts any attribute, and Megatron Core of that revision never reads it). A
model key with no close name may be a field of a model class the linter does not know (a provider's own): it is
unknown (IN012 with `--show-unknowns`), not reported.

## Why is this bad?
A misspelt field is not set: the run silently uses the default, or Megatron Bridge fails when it builds the config.

## Example
```yaml
model:
  recompute_granularty: full
```

## Use instead
```yaml
model:
  recompute_granularity: full
```
)md"),
        input_error_info(InputError::WrongType, Severity::Error, "a value has the wrong type for its field",
                         R"md(## What it does
Reports a value whose type does not fit its field, e.g. a string where an integer is expected.

## Why is this bad?
The dataclass keeps the wrong type and the run fails, or compares it wrongly, far from the line that set it.

## Example
```yaml
model:
  recompute_num_layers: two
```

## Use instead
```yaml
model:
  recompute_num_layers: 2
```
)md"),
        input_error_info(InputError::DuplicateKey, Severity::Error, "a key appears twice in one mapping",
                         R"md(## What it does
Reports a key written twice in the same mapping, at the second one.

## Why is this bad?
YAML loaders keep one of the two values without a word; which one the run uses is easy to misread.

## Example
```yaml
model:
  recompute_granularity: full
  recompute_granularity: selective
```

## Use instead
```yaml
model:
  recompute_granularity: selective
```
)md"),
        input_error_info(InputError::BadOverride, Severity::Error, "a command-line override is malformed",
                         R"md(## What it does
Reports a Hydra-style override after `--` that cannot be parsed (no `=`, an unknown section, a malformed value); nothing
is checked then.

## Why is this bad?
Checking the recipe without the override would check a different config than the one the job runs.

## Example
```sh
mbridge-lint check recipe.py -- model.recompute_granularity
```

## Use instead
```sh
mbridge-lint check recipe.py -- model.recompute_granularity=full
```
)md"),
        input_error_info(InputError::LimitExceeded, Severity::Error, "the input exceeds one of the linter's limits",
                         R"md(## What it does
Reports input beyond a limit that keeps the linter bounded on hostile files (200 levels of YAML nesting, 250,000
values or 64 MiB of text from YAML aliases per document, 128 levels of dotted keys and nesting in the TOML
configuration, 300,000 tokens in a Python file, the evaluation budget of a Python recipe or module top level: steps,
1 MiB for one string, 64 MiB built in all); the message names the limit, which `--limit NAME=VALUE` sets for a run
(docs/limits.md lists them).

## Why is this bad?
A config that large or that deeply nested is almost certainly generated by mistake, and checking it would not end in
reasonable time.

## Example
```yaml
a: &a [x, x, x, x, x, x, x, x, x, x]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]
# ... and so on: each level multiplies the values ten times
```

## Use instead
```yaml
model:
  recompute_granularity: full
```
)md"),
        input_error_info(InputError::UnknownTarget, Severity::Error, "a recipe function or file to check is not found",
                         R"md(## What it does
Reports a `recipe.py::function` whose function does not exist, or a named module that defines no recipe.

## Why is this bad?
Nothing would be checked, and a typo in a CI command would pass silently.

## Example
```sh
mbridge-lint check recipes/llama3.py::llama3_8b_pretrain_confg
```

## Use instead
```sh
mbridge-lint check recipes/llama3.py::llama3_8b_pretrain_config
```
)md"),
        input_error_info(InputError::UnknownModel, Severity::Warning,
                         "the architecture of a Hugging Face model is not known", R"md(## What it does
Warns when a recipe builds its model from a Hugging Face id whose config.json the linter cannot find (not bundled, not
in `hf-config-paths`, not in the local cache).

## Why is this bad?
Layer counts, experts and the attention type stay unknown, so the checks that need them are skipped for that model.

## Example
```python
cfg.model = AutoBridge.from_hf_pretrained("org/unknown-model").to_megatron_provider()
```

## Use instead
```toml
# .mbridge-lint.toml: where the model's config.json lives
hf-config-paths = ["models/"]
```
)md"),
        input_error_info(InputError::UnknownValue, Severity::Error, "a name the linter looks up is not known",
                         R"md(## What it does
Reports a name the linter must look up and cannot find: a `mixed_precision` recipe, a suppression directive, a rule
code; with "did you mean". A `mixed_precision` name is looked up as Megatron Bridge does at run time, in the linted
tree's own registry when the file is in a Bridge tree (the `get_mixed_precision_config` of its `ConfigContainer`, or
of the module of `MixedPrecisionConfig`), for recipes, YAML files, `--config-file` overlays and overrides alike; else in
the bundled catalog.

## Why is this bad?
Megatron Bridge fails on an unknown `mixed_precision` recipe name, and a misspelt directive silences nothing.

## Example
```yaml
mixed_precision: bf16_mixd
```

## Use instead
```yaml
mixed_precision: bf16_mixed
```
)md"),
        input_error_info(InputError::NotResolved, Severity::Info, "a value a recipe computes cannot be followed",
                         R"md(## What it does
With `--show-unknowns`, reports each value a Python recipe computes in a way the evaluator cannot follow (an outside
function's result, a file read at run time); the checks that need it stay silent. A call the evaluator cannot follow
(a function outside the source root, or of a module it cannot find) that receives the config, or anything reachable
from it, is reported once at the call, with the fields it may have written: they are unknown from there on, not the
values before the call, and the recipe does not count as resolved.

## Why is this bad?
It is not wrong in itself: it says where the linter could not see, so a clean result is read correctly.

## Example
```python
cfg.model.recompute_num_layers = read_layers_from_env()
```

## Use instead
```python
cfg.model.recompute_num_layers = 1
```
)md"),
    };
    return docs;
}

}  // namespace mbl
