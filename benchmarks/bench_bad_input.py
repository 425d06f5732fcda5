"""Print how long each case of tests/test_bad_input.py's corpus takes to be refused.

Run: ``python benchmarks/bench_bad_input.py``. Each bad call is timed (best of five) until it
raises; the table lists the slowest cases first, then the median and the slowest. Target: every
refusal well under a second on the course's 2-core reference machine (a refusal is a few
comparisons; a slow one means work, or an allocation, happened before the check).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.test_bad_input import CASES  # noqa: E402

TARGET_SECONDS = 1.0


def refusal_seconds(case) -> float:
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        try:
            case.call()
        except case.errors:
            pass
        else:
            raise SystemExit(f"{case.id}: not refused")
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    timings = sorted(((refusal_seconds(case), case.id) for case in CASES), reverse=True)
    for seconds, name in timings[:10]:
        print(f"{seconds * 1000:10.3f} ms  {name}")
    values = [seconds for seconds, _ in timings]
    print(f"{len(values)} cases: median {statistics.median(values) * 1000:.3f} ms, "
          f"slowest {values[0] * 1000:.3f} ms ({timings[0][1]})")
    print(f"target: every refusal under {TARGET_SECONDS:.0f} s: "
          f"{'met' if values[0] < TARGET_SECONDS else 'NOT met'}")


if __name__ == "__main__":
    main()
