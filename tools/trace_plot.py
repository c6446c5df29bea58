#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""trace_plot.py: draw a libooc_gemm timeline (the Chrome trace JSON that
`oocgemm run --trace FILE` writes) as a PNG, one row per lane: copy in,
compute, copy out, reader and writer threads; with several devices, one
group of rows per device. For docs/; Perfetto
(ui.perfetto.dev) opens the JSON itself for interactive use.

usage: trace_plot.py TRACE.json OUT.png [--title TEXT]
"""
import argparse
import json
import sys

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: E402
except ImportError as e:
    # say what is missing and how to get it, not a traceback
    sys.exit("trace_plot.py: needs matplotlib (%s): apt-get install python3-matplotlib, or pip install "
             "matplotlib; or open the trace in Perfetto (ui.perfetto.dev)" % e)

COLORS = {"H2D A": "#4c72b0", "H2D A+C": "#4c72b0", "H2D B": "#8172b2", "gemm": "#55a868",
          "gemm (chunk of B)": "#8fd19e", "D2H C": "#c44e52", "stage A": "#dd8452",
          "stage A+C": "#dd8452", "stage C": "#dd8452", "stage B": "#937860", "unstage C": "#da8bc3"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("png")
    ap.add_argument("--title", default="")
    a = ap.parse_args()
    with open(a.trace) as f:
        doc = json.load(f)
    meta = [e for e in doc["traceEvents"] if e.get("ph") == "M"]
    devices = {e["pid"]: e["args"]["name"] for e in meta if e["name"] == "process_name"}
    several = len({e["pid"] for e in doc["traceEvents"] if e.get("ph") == "X"}) > 1
    lanes = {(e["pid"], e["tid"]): (devices.get(e["pid"], "") + ": " if several else "") + e["args"]["name"]
             for e in meta if "tid" in e}
    ops = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
    used = sorted({(e["pid"], e["tid"]) for e in ops})
    fig, ax = plt.subplots(figsize=(12, 0.6 * len(used) + 1.6))
    seen = set()
    for row, tid in enumerate(reversed(used)):
        for e in (e for e in ops if (e["pid"], e["tid"]) == tid):
            name = e["name"]
            label = None if name in seen else name
            seen.add(name)
            ax.barh(row, e["dur"] / 1e3, left=e["ts"] / 1e3, height=0.7, color=COLORS.get(name, "#999999"),
                    edgecolor="white", linewidth=0.3, label=label)
    ax.set_yticks(range(len(used)))
    ax.set_yticklabels([lanes.get(t, str(t)) for t in reversed(used)])
    ax.set_xlabel("time (ms)")
    other = doc.get("otherData", {})
    title = a.title or "libooc_gemm timeline"
    if "overlap_efficiency" in other:
        title += "  (overlap efficiency %.2f, wall %.3f s)" % (other["overlap_efficiency"], other["wall_s"])
    ax.set_title(title)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.25), ncol=6, fontsize="small", frameon=False)
    fig.tight_layout()
    fig.savefig(a.png, dpi=110)


if __name__ == "__main__":
    main()
