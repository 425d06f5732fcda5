"""The expert all-to-all on one wrapped torus axis against a switched fabric (issue 25).

A fixed array (one MoE layer's dispatch of a fixed global batch) is exchanged by more and more
chips. On one wrapped TPU ICI axis its time stays about V / (8 w) however many chips share the
axis; on an NVLink switch (one GB200 NVL72 rack) and on NVLink + InfiniBand (H100 nodes) it
falls about as 1/n. Every number comes from accelkit.experts.all_to_all_scaling, i.e. from
accelkit.collectives; this script only prints them.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/all_to_all_scaling.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from accelkit import experts  # noqa: E402

#: 1 GB: e.g. 65,536 tokens x 8 experts each x 7,168 values x 2 bytes is about 7.5 GB; any size
#: gives the same shape (latency aside).
ARRAY_BYTES = 1e9
CASES = (
    ("TPU v5p", (4, 8, 16)),
    ("TPU7x", (4, 8, 16)),
    ("GB200", (4, 8, 16, 32, 72)),
    ("H100", (8, 16, 32, 64, 128, 256)),
)


def main() -> None:
    print(f"all-to-all of {ARRAY_BYTES / 1e9:g} GB (the whole array), one chip count per row")
    print(f"{'chip':24s} {'fabric':30s} {'chips':>6s} {'ms':>8s} {'vs first':>9s}")
    for chip, counts in CASES:
        rows = experts.all_to_all_scaling(chip, array_bytes=ARRAY_BYTES, counts=counts)
        first = rows[0].seconds
        for r in rows:
            print(f"{r.chip:24s} {r.fabric:30s} {r.chips:6d} {r.seconds * 1e3:8.3f} "
                  f"{r.seconds / first:9.2f}")


if __name__ == "__main__":
    main()
