// RC000 megatron-core-rejects
#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{"RC000",
                         "megatron-core-rejects",
                         Severity::Error,
                         "Megatron Core's __post_init__ raises for this config (a check no named rule explains)",
                         R"md(## What it does
Reports every check of Megatron Core's config classes (`TransformerConfig.__post_init__` and the functions it calls)
that raises for the config, where no named rule (RC001 to RC030) explains it, with Megatron Core's own message and the
file and line that raise. The checks are compiled from Megatron Core's source at the revision the job runs (the
bundled revisions, or the tree `--mcore-path` or a checked-out `3rdparty/Megatron-LM` names), never written by hand.
A check that depends on something the linter does not know (the installed Transformer Engine, an environment
variable, a value the recipe computes in a way the linter cannot follow) is not reported.

## Why is this bad?
Megatron Core raises at start-up, after the job has waited in the queue, and shows only the first failing check.

## Example
```yaml
model:
  num_layers: 4
  hidden_size: 1024
  num_attention_heads: 16
  tensor_model_parallel_size: 3
```

## Use instead
```yaml
model:
  num_layers: 4
  hidden_size: 1024
  num_attention_heads: 16
  tensor_model_parallel_size: 4
```
)md",
                         ""};

// The rule runner emits RC000 (rules/megatron_raises.cpp): only it knows which raises the named rules explained.
class MegatronCoreRejects final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext&) const override {}
};

}  // namespace

MBL_DEFINE_RULE(RC000, MegatronCoreRejects)

}  // namespace mbl
