#pragma once
// Megatron Bridge as the evaluator's host (pyeval/host.hpp): what Bridge and the libraries it calls do at run time,
// modelled where the evaluator meets them. Mixed precision recipes and get_mixed_precision_config; AutoBridge and
// AutoConfig turning a Hugging Face model into a provider or a model config (the tree's registered model bridges
// first, the bundled catalog as the fallback: hf_models.hpp); model providers and TransformerConfig-like classes,
// whose unset fields take Megatron Core's defaults at the selected revision; Megatron Core's config classes as the
// described dataclasses a provider builds on; `@register_bridge` on a class.
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/schema.hpp"
#include "core/shared_once.hpp"
#include "parser/bridge/hf_models.hpp"
#include "pyeval/call_memo.hpp"
#include "pyeval/host.hpp"
#include "pyeval/interpreter.hpp"

namespace mbl::py {

struct HfBridgeObj;

class BridgeHost final : public Host {
public:
    // Both must outlive the host.
    BridgeHost(const Revision& revision, const HfResolver& hf);

    const Revision& revision() const { return revision_; }
    const HfResolver& hf() const { return hf_; }

    std::optional<Val> intercept_call(Interp& in, Frame& f, const Val& callee, CallArgs& args, Loc site) override;
    Val call_host_function(Interp& in, Frame& f, BuiltinObj& fn, CallArgs& args, Loc site) override;
    std::optional<Val> attr(Interp& in, const Val& obj, const std::string& name, Loc at) override;
    void attr_stored(const std::string& name, Val& value) override;
    bool defaults_class(std::string_view class_name) const override;
    std::optional<Val> attr_default(const std::string& name) const override;
    const std::vector<std::string>& default_names() const override { return model_field_names_; }
    const ConfigClass* described_class(std::string_view dotted) const override;
    const ConfigClass* described_base(std::string_view name) const override;
    std::optional<Attr> described_default(const ConfigClass& owner, const ClassField& field,
                                          const SetInfo& made) const override;
    void add_described_defaults(InstanceObj& inst, const ConfigClass& cls) const override;
    void class_decorated(Interp& in, Frame& f, ClassObj& cls, NodeId decorated) override;

    // A class of the tree registered as Megatron Bridge's model bridge for Hugging Face architectures
    // (`@...register_bridge(source=..., ...)`), found by a syntax scan of the tree's files.
    struct BridgeRegistration {
        std::string module;  // dotted module name
        std::string class_name;
        std::string source;  // the architecture as written: a string literal's text, or a name to evaluate
        bool source_is_literal = false;
    };
    // The registrations in the files of `index` that mention `text` (every registering file when empty). The files
    // are listed once; each is parsed only when a lookup needs it. One host serves one source root.
    std::vector<BridgeRegistration> model_bridges(ModuleIndex& index, std::string_view text);

private:
    // AutoBridge (bridge_host.cpp).
    Val auto_bridge_method(const Val& self, const std::string& name, Loc at);
    Val auto_bridge_from_config(Frame& f, const Val& config, Loc site);
    Val hf_config_object(Interp& in, Frame& f, const std::string& model_id, Loc site);
    Val hf_model(Interp& in, Frame& f, const HfBridgeObj& bridge, bool model_config, Loc site);
    std::optional<Val> tree_model_bridge(Interp& in, Frame& f, const Val& hf_config, const std::string& model_id,
                                         bool model_config, Loc site);
    Val hf_provider(Interp& in, Frame& f, const HfBridgeObj& bridge, Loc site);
    void report_unknown_model(Interp& in, const std::string& model_id, Loc at);  // IN010
    // The architecture fields of a model the linter makes from a Hugging Face id, those the revision has.
    std::vector<std::string> architecture_fields() const;
    // Calls into Bridge's mixed_precision module from outside the source root.
    std::optional<Val> intercept_precision(Frame& f, const std::string& qualname, const std::string& short_name,
                                           CallArgs& args, Loc site);
    Val precision_recipe(Frame& f, const std::string& name, Loc site);
    // Whether the revision's defaults already give a Megatron Core class's fields (TransformerConfig and its bases).
    bool revision_supplies(const ConfigClass& owner) const;

    const Revision& revision_;
    const HfResolver& hf_;
    std::map<std::string, std::size_t, std::less<>> default_index_;  // field -> position in revision_.defaults
    std::vector<std::string> model_field_names_;
    SharedOnce bridge_listing_;                            // fills bridge_files_ from the source root's Python files
    std::vector<std::string> python_files_;                // while listing: every Python file found
    std::vector<std::optional<std::string>> registering_;  // while listing: the text of those that register bridges
    std::vector<std::pair<std::string, std::string>> bridge_files_;  // path, text of files that register bridges
    std::mutex bridges_mutex_;
    std::map<std::string, std::vector<BridgeRegistration>> bridges_by_file_;
    // model_bridges' answers by `text`: every recipe of an architecture asks again, and each question would search
    // the text of every registering file.
    std::map<std::string, std::vector<BridgeRegistration>, std::less<>> bridges_by_text_;
    CallMemo tree_bridges_;  // the tree's model bridge of each model id (hf_model)
};

// What the tree's own lookup says of a mixed_precision name.
struct PrecisionResolution {
    enum class Kind { NoLookup, Config, Unknown, NotRegistered };
    Kind kind = Kind::NoLookup;      // NoLookup: the tree defines no get_mixed_precision_config
    Val config;                      // Config: the MixedPrecisionConfig object; Unknown: why it cannot be followed
    std::vector<std::string> names;  // NotRegistered: the names the registry holds
    SourceRange resolver;            // where the looking-up function is defined
    std::string resolver_note;       // "get_mixed_precision_config() looks recipes up in the registry of ..."
};

// A `mixed_precision` name resolved as Bridge does at run time, by the tree's own get_mixed_precision_config for
// configs whose ConfigContainer is defined in `config_module`, evaluated by `in`.
PrecisionResolution resolve_precision_name(Interp& in, Module* config_module, const std::string& name);

}  // namespace mbl::py
