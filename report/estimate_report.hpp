#pragma once
// Output formats of `mbridge-lint estimate`: text tables, JSON (every figure in bytes and GiB) and a self-contained
// HTML page with inline SVG stacked bars per rank and per recompute option.
#include <iosfwd>
#include <string>

#include "memory/estimate.hpp"

namespace mbl {

struct EstimateHeader {
    std::string input;                 // the config the estimate is for
    std::string revision;              // Megatron Core revision
    std::string data_parallel_source;  // "--data-parallel-size", "--gpus 64", or "" when assumed
};

void write_estimate_text(std::ostream& out, const memory::Estimate& est, const EstimateHeader& header);
// Lines and words the text and HTML reports share.
std::string estimate_model_line(const memory::Estimate& est);
std::string estimate_run_line(const memory::Estimate& est, const EstimateHeader& header);
// The time column: "step time" (replay and host over the step without recompute) when a measured step was given,
// else "replay" (the replayed work's roofline share, host time beside it); and what it means, for the legend.
std::string time_column_name(const memory::Estimate& est);
std::string time_column_words(const memory::Estimate& est);
void write_estimate_json(std::ostream& out, const memory::Estimate& est, const EstimateHeader& header);
void write_estimate_html(std::ostream& out, const memory::Estimate& est, const EstimateHeader& header);

}  // namespace mbl
