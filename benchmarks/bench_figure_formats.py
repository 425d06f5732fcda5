"""What a widget's redraw costs as SVG (text as text) and as PNG at 2× density, per text.

The widgets send SVG (``accelkit.widgets._base.figure_image``); this script prints the figures
behind that choice, on this machine's matplotlib: the CPU time of drawing a figure of N short
texts as SVG (``print_svg``, ``svg.fonttype: none``) and with Agg at 2 × 80 dpi through a kept
canvas (its renderer, and so matplotlib's text-metrics cache, persists between draws), and of
encoding that 2× frame as PNG (Pillow, zlib level 1, the fastest). Medians of 20 draws.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_figure_formats.py
"""

from __future__ import annotations

import io
import os
import statistics
import time

import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.backends.backend_svg import FigureCanvasSVG
from matplotlib.figure import Figure
from PIL import Image


def _median_ms(draw, repeats: int = 20) -> float:
    draw()  # warm: fonts loaded, canvases made
    times = []
    for _ in range(repeats):
        started = time.process_time()
        draw()
        times.append(time.process_time() - started)
    return statistics.median(times) * 1e3


def _figure(texts: int, dpi: float) -> Figure:
    figure = Figure(figsize=(7.0, 3.4), dpi=dpi)
    for i in range(texts):
        figure.text((i % 10) / 10, (i // 10) / 6, f"label {i}", fontsize=8)
    return figure


def main() -> None:
    print(f"matplotlib {matplotlib.__version__}, load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'texts':>6}{'SVG ms':>9}{'Agg 2x ms':>11}{'PNG encode ms':>15}")
    for texts in (0, 25, 50):
        svg_figure = _figure(texts, 72)

        def svg() -> None:
            with matplotlib.rc_context({"svg.fonttype": "none"}):
                FigureCanvasSVG(svg_figure).print_svg(io.BytesIO())

        agg_figure = _figure(texts, 160)
        canvas = FigureCanvasAgg(agg_figure)

        def encode() -> None:
            frame = Image.frombuffer("RGBA", canvas.get_width_height(), canvas.buffer_rgba(),
                                     "raw", "RGBA", 0, 1)
            frame.save(io.BytesIO(), format="png", compress_level=1)

        canvas.draw()
        print(f"{texts:>6}{_median_ms(svg):>9.1f}{_median_ms(canvas.draw):>11.1f}"
              f"{_median_ms(encode):>15.1f}")


if __name__ == "__main__":
    main()
