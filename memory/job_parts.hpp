#pragma once
// The steps of make_job (memory/job.hpp), one file each: the layers and their stages (job_layers.cpp), the layer
// shape (job_shape.cpp) and the run (job_run.cpp). Internal to memory/.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "memory/job.hpp"

namespace mbl::memory {

// Typed reads of the effective model that fall back where a field is unknown or None.
std::int64_t int_or(const EffectiveModel& m, FieldName field, std::int64_t fallback);
double number_or(const EffectiveModel& m, FieldName field, double fallback);
bool flag_of(const EffectiveModel& m, FieldName field);

// Which kind each layer is, and the hybrid pattern's '|' segments (the pipeline stages).
struct LayerPlan {
    std::vector<LayerKind> kinds;
    std::vector<int> segments;  // layers per '|'-separated segment of a hybrid pattern; empty if none
};
// The hybrid layer pattern (hybrid_layer_pattern, or the deprecated hybrid_override_pattern); nullopt for GPT models.
std::optional<std::string> hybrid_pattern(const EffectiveModel& m);
std::optional<LayerPlan> plan_from_pattern(const std::string& pattern, std::vector<Assumption>& notes);
std::vector<LayerKind> gpt_layer_kinds(const EffectiveModel& m, int layers, std::vector<Assumption>& notes);
// Layers per pipeline stage (and the virtual pipeline size a pattern or layout implies).
std::vector<int> stage_layers(const EffectiveModel& m, const LayerPlan& plan, int pp, int& vpp,
                              std::vector<Assumption>& notes);

// The layer shape of the effective model (seq_length and micro_batch already set on `s`).
void fill_shape(const EffectiveModel& m, LayerShape& s, std::vector<Assumption>& notes);

// The run: precision, vocabulary, data-parallel size, schedule, PEFT.
void read_precision(const EffectiveModel& m, Precision& p, std::vector<Assumption>& notes);
void read_fp8_weights(const EffectiveModel& m, const LayerShape& s, Precision& p, std::vector<Assumption>& notes);
std::int64_t padded_vocab(const EffectiveModel& m, int tp, std::vector<Assumption>& notes);
// Empty when usable, else why not (the --gpus count does not divide).
std::string read_data_parallel(const EffectiveModel& m, const JobInputs& in, Job& job);
void read_schedule(const EffectiveModel& m, Job& job);
void read_peft(const EffectiveModel& m, Job& job);

}  // namespace mbl::memory
