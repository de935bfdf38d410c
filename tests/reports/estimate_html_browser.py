#!/usr/bin/env python3
"""`estimate --html` rendered by a real browser (headless Chromium, Debian's `chromium`), checked against
`estimate --format json` of the same run.

A pipeline of four ranks whose peaks differ, and a budget between them, so that some ranks fit and others do not.
A copy of the page gets a script that measures what Chromium laid out and painted (computed colours, the boxes of the
SVG shapes, the cells' text) and writes it into the page; `chromium --headless --dump-dom` prints the page after the
script ran. Checked:
  - each rank's bar outline and table row are in the "fits" colours exactly when the JSON says the rank fits;
  - bar lengths are proportional to peak + reserve, the reserve is a band of its own proportional to the reserve, and
    the budget line sits at the budget on the same scale;
  - one figure per quantity: the table's peak, activations and reserve, and the bars' tooltips, are the JSON's;
  - the legend wraps inside the chart (nothing drawn past its width).
Usage: estimate_html_browser.py BINARY EXAMPLE.yaml
"""
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

FIT_OUTLINE, OVER_OUTLINE = "rgb(46, 125, 50)", "rgb(198, 40, 40)"
FIT_ROW, OVER_ROW = "rgb(238, 248, 238)", "rgb(251, 234, 234)"
RESERVE = "reserve (kept free)"

MEASURE = """
<script>
window.addEventListener("load", () => {
  const svgs = [...document.querySelectorAll("svg")];
  const box = (e) => { const b = e.getBBox(); return {x: b.x, width: b.width, right: b.x + b.width}; };
  const ranks = svgs[0];
  const bars = [];
  for (const outline of ranks.querySelectorAll("rect[data-fits]")) {
    const y = outline.getAttribute("y");
    const parts = [...ranks.querySelectorAll(`rect[data-part][y="${y}"]`)].map((p) => ({
      part: p.dataset.part, width: box(p).width, title: p.querySelector("title").textContent}));
    bars.push({fits: outline.dataset.fits, stroke: getComputedStyle(outline).stroke, width: box(outline).width,
               x: box(outline).x, parts});
  }
  const line = ranks.querySelector("line");
  const rows = [...document.querySelectorAll("table")[0].querySelectorAll("tr")].slice(1).map((tr) => ({
    background: getComputedStyle(tr.querySelector("td")).backgroundColor,
    cells: [...tr.querySelectorAll("td")].map((td) => td.textContent)}));
  const legend = [...ranks.querySelectorAll("text")].filter((t) => !t.hasAttribute("text-anchor"))
    .slice(0, ranks.querySelectorAll("rect:not([data-part]):not([data-fits])").length);
  const out = document.createElement("pre");
  out.id = "measured";
  out.textContent = JSON.stringify({
    bars, rows, budget_x: line ? Number(line.getAttribute("x1")) : null,
    svg_width: ranks.width.baseVal.value,
    legend_right: Math.max(...legend.map((t) => box(t).right)),
    legend_rows: new Set([...ranks.querySelectorAll("rect:not([data-part]):not([data-fits])")]
                           .map((r) => r.getAttribute("y"))).size});
  document.body.appendChild(out);
});
</script>
"""


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def gib(text):
    match = re.search(r"([0-9.]+) GiB", text)
    if not match:
        fail(f"no GiB figure in {text!r}")
    return float(match.group(1))


def estimate(binary, example, work, *extra):
    args = [binary, "estimate", example, "--mcore", "0.20.dev", *extra, "--", "model.pipeline_model_parallel_size=4"]
    run = subprocess.run(args, capture_output=True, text=True, cwd=work)
    if run.returncode != 0:
        fail(f"{' '.join(args)}: exit {run.returncode}: {run.stderr}")
    return run.stdout


def render(page):
    chromium = shutil.which("chromium") or fail("chromium is not installed (scripts/setup.sh --tests installs it)")
    run = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                          "--virtual-time-budget=5000", "--dump-dom", page.as_uri()],
                         capture_output=True, text=True, timeout=120)
    match = re.search(r'<pre id="measured">(.*?)</pre>', run.stdout, re.S)
    if not match:
        fail(f"Chromium printed no measurements (exit {run.returncode}): {run.stderr[-2000:]}")
    return json.loads(match.group(1).replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<")
                      .replace("&gt;", ">"))


def main():
    binary, example = sys.argv[1], str(Path(sys.argv[2]).resolve())
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        unbounded = json.loads(estimate(binary, example, work, "--format", "json"))
        peaks = [r["peak"]["gib"] for r in unbounded["ranks"]]
        reserve = unbounded["reserve"]["gib"]
        budget = (min(peaks) + max(peaks)) / 2 + reserve  # some ranks fit, some do not
        flags = ["--gpu-memory", f"{budget:.3f}GiB"]
        data = json.loads(estimate(binary, example, work, *flags, "--format", "json"))
        estimate(binary, example, work, *flags, "--html", str(work / "estimate.html"))
        page = work / "measured.html"
        page.write_text((work / "estimate.html").read_text().replace("</body>", MEASURE + "</body>"))
        seen = render(page)

    ranks = data["ranks"]
    fits = [r["fits"] for r in ranks]
    if all(fits) or not any(fits):
        fail(f"the budget {budget:.2f} GiB should split the ranks: fits {fits}")
    if len(seen["bars"]) != len(ranks) or len(seen["rows"]) != len(ranks):
        fail(f"{len(ranks)} ranks in the JSON, {len(seen['bars'])} bars and {len(seen['rows'])} rows drawn")
    scale = None
    for rank, bar, row in zip(ranks, seen["bars"], seen["rows"]):
        name = f"rank {rank['stage']}"
        if bar["stroke"] != (FIT_OUTLINE if rank["fits"] else OVER_OUTLINE):
            fail(f"{name}: outline {bar['stroke']}, JSON fits={rank['fits']}")
        if row["background"] != (FIT_ROW if rank["fits"] else OVER_ROW):
            fail(f"{name}: table row {row['background']}, JSON fits={rank['fits']}")
        total = rank["peak"]["gib"] + data["reserve"]["gib"]
        scale = scale or bar["width"] / total
        if abs(bar["width"] / total - scale) > 0.01 * scale:
            fail(f"{name}: bar {bar['width']:.1f} px for {total:.2f} GiB, off the scale of the others")
        band = [p for p in bar["parts"] if p["part"] == RESERVE]
        if len(band) != 1 or abs(band[0]["width"] - data["reserve"]["gib"] * scale) > 1.0:
            fail(f"{name}: the reserve band is {band}, expected {data['reserve']['gib'] * scale:.1f} px")
        cells = row["cells"]  # rank, layers, in flight, params, grads, optimizer, activations, transient, peak, reserve
        for column, key in ((6, "activations"), (8, "peak")):
            if abs(gib(cells[column]) - rank[key]["gib"]) > 0.051:
                fail(f"{name}: the table's {key} {cells[column]}, the JSON's {rank[key]['gib']:.2f} GiB")
        if abs(gib(cells[9]) - data["reserve"]["gib"]) > 0.051:
            fail(f"{name}: the table's reserve {cells[9]}, the JSON's {data['reserve']['gib']:.2f} GiB")
        titles = {p["part"]: p["title"] for p in bar["parts"]}
        if "activations" in titles and gib(titles["activations"]) != gib(cells[6]):
            fail(f"{name}: activations {titles['activations']} in the bar, {cells[6]} in the table")
    budget_gib = data["budget"]["gib"]
    if abs(seen["budget_x"] - seen["bars"][0]["x"] - budget_gib * scale) > 1.0:
        fail(f"the budget line at x={seen['budget_x']}, expected {seen['bars'][0]['x'] + budget_gib * scale:.1f}")
    if seen["legend_right"] > seen["svg_width"]:
        fail(f"the legend runs to x={seen['legend_right']:.0f}, past the chart's width {seen['svg_width']}")
    print(f"PASS: {len(ranks)} ranks ({sum(fits)} fit a {budget_gib:.2f} GiB budget) drawn as the JSON says; "
          f"legend in {seen['legend_rows']} row(s)")


if __name__ == "__main__":
    main()
