#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <ostream>
#include <tuple>
#include <vector>

#include "report/estimate_report.hpp"

namespace mbl {

namespace {

std::string capitalized(std::string s) {
    if (!s.empty()) s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
    return s;
}

using memory::format_gib;

std::string escape(const std::string& text) {
    std::string out;
    for (char c : text) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            default: out += c;
        }
    }
    return out;
}

struct Segment {
    const char* name;
    const char* color;
};
constexpr Segment kParams{"params", "#4e79a7"}, kGrads{"grads", "#f28e2b"}, kOptim{"optimizer", "#e15759"},
    kActs{"activations", "#76b7b2"}, kTransient{"transient", "#59a14f"},
    kStatic{"params + grads + optimizer", "#9c9c9c"}, kReserve{"reserve (kept free)", "#d8cfc4"},
    kActsTransient{"activations + transient", "#76b7b2"}, kStep{"optimizer step", "#b07aa1"};
// A bar's outline and its note say whether peak + reserve is within the budget.
constexpr const char* kFitColor = "#2e7d32";
constexpr const char* kOverColor = "#c62828";

struct Bar {
    std::string label;
    std::vector<std::pair<Segment, double>> parts;
    std::string note;
    std::optional<bool> fits;  // with a budget: peak + reserve within it
};

// "fits" or "over budget by 17.2 GiB", against the budget with the reserve counted, as the text and JSON decide.
std::string fit_note(double peak, double reserve, double budget) {
    return peak + reserve <= budget ? "fits" : fmt::format("over budget by {}", format_gib(peak + reserve - budget));
}

// A horizontal stacked bar chart with a dashed budget line; one row per bar. The legend wraps to the chart's width.
void chart(std::ostream& out, const std::vector<Bar>& bars, std::optional<double> budget,
           const std::vector<Segment>& legend) {
    constexpr int label_w = 230, bar_w = 560, row_h = 30, legend_h = 18, width = label_w + bar_w + 210;
    // Legend rows first: their count sets where the bars start.
    std::vector<std::tuple<int, int, Segment>> keys;  // x, row, segment
    int lx = label_w, legend_rows = 1;
    for (const auto& seg : legend) {
        const int w = 24 + 7 * static_cast<int>(std::string(seg.name).size());
        if (lx + w > width && lx > label_w) {
            lx = label_w;
            ++legend_rows;
        }
        keys.emplace_back(lx, legend_rows - 1, seg);
        lx += w;
    }
    const int top = 28 + legend_rows * legend_h;
    double max_total = budget.value_or(0);
    for (const auto& b : bars) {
        double t = 0;
        for (const auto& [seg, v] : b.parts) t += v;
        max_total = std::max(max_total, t);
    }
    if (max_total <= 0) max_total = 1;
    const double scale = bar_w / (max_total * 1.05);
    const int height = top + static_cast<int>(bars.size()) * row_h + 10;
    out << fmt::format("<svg width=\"{}\" height=\"{}\" role=\"img\">\n", width, height);
    for (const auto& [x, row, seg] : keys)
        out << fmt::format("<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{}\" y=\"{}\" "
                           "font-size=\"12\">{}</text>\n",
                           x, 6 + row * legend_h, seg.color, x + 16, 17 + row * legend_h, escape(seg.name));
    std::vector<std::tuple<double, int, std::string>> bar_ends;  // value labels, drawn last over the budget line
    for (size_t i = 0; i < bars.size(); ++i) {
        const auto& b = bars[i];
        const int y = top + static_cast<int>(i) * row_h;
        out << fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"end\">{}</text>\n", label_w - 8,
                           y + 16, escape(b.label));
        double x = label_w;
        for (const auto& [seg, v] : b.parts) {
            const double w = v * scale;
            out << fmt::format("<rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"20\" fill=\"{}\" "
                               "data-part=\"{}\"><title>{}: {}</title></rect>\n",
                               x, y + 2, w, seg.color, escape(seg.name), escape(seg.name), format_gib(v));
            x += w;
        }
        if (b.fits)
            out << fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"20\" fill=\"none\" stroke=\"{}\" "
                               "stroke-width=\"2\" data-fits=\"{}\"/>\n",
                               label_w, y + 2, x - label_w, *b.fits ? kFitColor : kOverColor, *b.fits ? "yes" : "no");
        bar_ends.emplace_back(x + 6, y + 16, b.note);
    }
    if (budget) {
        const double bx = label_w + *budget * scale;
        out << fmt::format(
            "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#c00\" stroke-width=\"2\" "
            "stroke-dasharray=\"6 4\"/><text x=\"{0:.1f}\" y=\"{3}\" font-size=\"11\" fill=\"#c00\" "
            "text-anchor=\"middle\">budget {4}</text>\n",
            bx, top - 2, height - 4, top - 8, format_gib(*budget));
    }
    for (const auto& [x, y, text] : bar_ends)
        out << fmt::format("<text x=\"{:.1f}\" y=\"{}\" font-size=\"12\" stroke=\"#fff\" stroke-width=\"3\" "
                           "paint-order=\"stroke\">{}</text>\n",
                           x, y, escape(text));
    out << "</svg>\n";
}

}  // namespace

void write_estimate_html(std::ostream& out, const memory::Estimate& est, const EstimateHeader& header) {
    out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>mbridge-lint estimate: "
        << escape(header.input)
        << "</title>\n<style>body{font-family:system-ui,sans-serif;margin:24px;color:#222}table{border-collapse:collapse;"
           "margin:8px 0 20px}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}td:first-child,th:first-child"
           "{text-align:left}tr.fit td{background:#eef8ee}tr.over td{background:#fbeaea}.muted{color:#666;font-size:13px}"
           "svg{display:block;margin:8px 0 16px}dl{max-width:60em}dt{font-weight:600;margin-top:4px}dd{margin-left:1.5em}</style></head><body>\n";
    out << "<h1>Memory estimate</h1>\n<p><b>" << escape(header.input) << "</b> (Megatron Core "
        << escape(header.revision) << ")<br>model: " << escape(estimate_model_line(est))
        << "<br>run: " << escape(estimate_run_line(est, header)) << "</p>\n";

    out << "<h2>Per rank (hottest first)</h2>\n";
    // The bars end at peak + reserve, where "fits" is decided; a rank whose peak is at the optimizer step shows that
    // step's extra beside the states instead of its (gone) activations.
    std::vector<Bar> rank_bars;
    for (const auto& r : est.ranks) {
        const double reserve = est.reserve_model.at(r.peak());
        Bar bar{fmt::format("rank {} ({}, {} layers)", r.stage, r.role, r.layers),
                {{kParams, r.params}, {kGrads, r.grads}, {kOptim, r.optimizer}},
                fmt::format("{} + {} reserve", format_gib(r.peak()), format_gib(reserve)),
                std::nullopt};
        if (r.peaks_at_optimizer_step()) bar.parts.push_back({kStep, r.optimizer_step});
        else
            bar.parts.insert(
                bar.parts.end(),
                {{kActs, r.activations}, {kTransient, r.leftover + r.transient}});  // the leftover is alive at the peak
        bar.parts.push_back({kReserve, reserve});
        if (est.budget) {
            bar.fits = r.peak() + reserve <= *est.budget;
            bar.note += "  " + fit_note(r.peak(), reserve, *est.budget);
        }
        rank_bars.push_back(std::move(bar));
    }
    std::vector<Segment> rank_legend{kParams, kGrads, kOptim, kActs, kTransient};
    if (std::any_of(est.ranks.begin(), est.ranks.end(), [](const auto& r) { return r.peaks_at_optimizer_step(); }))
        rank_legend.push_back(kStep);
    rank_legend.push_back(kReserve);
    chart(out, rank_bars, est.budget, rank_legend);
    out << "<table><tr><th>rank</th><th>layers</th><th>in flight</th><th>params</th><th>grads</th><th>optimizer</th>"
           "<th>activations</th><th>transient</th><th>peak</th><th>reserve</th><th>first-iteration peak</th>"
        << (est.budget ? "<th>fits</th>" : "") << "</tr>\n";
    for (const auto& r : est.ranks) {
        const double reserve = est.reserve_model.at(r.peak());
        const bool fits = est.budget && r.peak() + reserve <= *est.budget;
        out << fmt::format(
            "<tr class=\"{}\"><td>{} ({})</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
            "<td>{}</td><td>{}</td><td>{}</td><td>{}</td>{}</tr>\n",
            !est.budget ? ""
            : fits      ? "fit"
                        : "over",
            r.stage, r.role, r.layers, r.in_flight, format_gib(r.params), format_gib(r.grads), format_gib(r.optimizer),
            format_gib(r.activations), format_gib(r.transient), format_gib(r.peak()), format_gib(reserve),
            format_gib(r.first_iteration_peak()),
            est.budget ? fmt::format("<td>{}</td>", escape(fit_note(r.peak(), reserve, *est.budget))) : "");
    }
    out << "</table>\n<h2>Recompute options (hottest rank)</h2>\n";
    std::vector<Bar> option_bars;
    for (const auto& o : est.options) {
        const double reserve = est.reserve_model.at(o.peak);
        std::string note = fmt::format("{} + {} reserve", format_gib(o.peak), format_gib(reserve));
        if (est.budget) note += "  " + fit_note(o.peak, reserve, *est.budget);
        if (o.recompute.granularity != memory::Recompute::Granularity::None)
            note += fmt::format("; +{:.1f} % {}", o.step_overhead * 100, time_column_name(est));
        if (o.narrowest_fit) note += "; narrowest that fits";
        if (o.current) note += "  (current)";
        option_bars.push_back(
            {o.name,
             {{kStatic, o.peak - o.activations}, {kActsTransient, o.activations}, {kReserve, reserve}},
             note,
             o.fits});
    }
    chart(out, option_bars, est.budget, {kStatic, kActsTransient, kReserve});
    out << "<table><tr><th>option</th><th>activations + transient</th><th>peak</th><th>reserve</th><th>saving</th><th>"
        << time_column_name(est) << "</th><th>host (checkpoints)</th><th>replayed FLOPs</th><th>fits</th></tr>\n";
    for (const auto& o : est.options) {
        const bool none = o.recompute.granularity == memory::Recompute::Granularity::None;
        const double reserve = est.reserve_model.at(o.peak);
        const char* cls = !o.fits ? "" : *o.fits ? "fit" : "over";
        out << fmt::format(
            "<tr class=\"{}\"><td>{}{}</td><td>{} (rank {})</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
            "<td>{}</td><td>{}</td></tr>\n",
            cls, escape(o.name), o.current ? " (current)" : "", format_gib(o.activations), o.hottest_stage,
            format_gib(o.peak), format_gib(reserve), none ? "-" : format_gib(o.saving),
            none ? "-" : fmt::format("+{:.1f} %", o.step_overhead * 100),
            none ? "-" : fmt::format("{:.1f} ms ({})", o.host_seconds * 1e3, o.checkpoints),
            none ? "-" : fmt::format("+{:.1f} %", o.replay_share * 100),
            !o.fits ? "" : escape(fit_note(o.peak, reserve, *est.budget)));
    }
    out << "</table>\n";
    if (!est.assumptions.empty()) {
        out << "<h2>Assumptions</h2><ul class=\"muted\">\n";
        for (const auto& a : est.assumptions) out << "<li>" << escape(a.text) << "</li>\n";
        out << "</ul>\n";
    }
    // One term a line: the page is read, not scrolled sideways.
    const std::vector<std::pair<std::string, std::string>> terms{
        {"Activations", "kept by the in-flight micro-batches."},
        {"Transient", "on top at the peak (a layer's backward working set, or the logits and loss)."},
        {"Peak", "what PyTorch allocates."},
        {"Reserve",
         "kept free beside the peak for the CUDA context, a NCCL communicator's own memory and the allocator's slack; "
         "a rank or option fits when peak + reserve is within the budget."},
        {capitalized(time_column_name(est)), time_column_words(est) + "."},
        {"Host", "the checkpoints' own host time per step on one rank, on the critical path when the host paces the "
                 "step. Options are ordered by replay plus host time."},
        {"Replayed FLOPs", "extra forward FLOPs as a share of the step's."},
        {"First-iteration peak", "before the optimizer creates its states at the first step."}};
    out << "<dl class=\"muted\">\n";
    for (const auto& [term, words] : terms) out << fmt::format("<dt>{}</dt><dd>{}</dd>\n", escape(term), escape(words));
    out << "</dl>\n<p class=\"muted\">Generated by mbridge-lint.</p>\n</body></html>\n";
}

}  // namespace mbl
