"""Closed-form sums over runs of serving iterations: what lets
:class:`accelkit.serving_step.IterationGroup` (and the simulator through it) skip through
hundreds of decode iterations at the cost of a few.

In a run of iterations whose sequences only grow (each decode adds a token to every context),
every operation's compute and memory seconds are lines in the iteration index ``k``
(``c0 + c1·k`` and ``m0 + m1·k``, slopes >= 0) beside a fixed per-kernel cost; its roofline is
the largest of the three, piecewise linear in ``k``. A run is described by ``base`` (the
seconds every iteration shares) and ``lines`` (one ``(c0, c1, m0, m1, fixed)`` per operation
that grows). The sums here equal the iterations' seconds added one by one (the tests check
it), the tensor-parallel collectives either already in ``base`` (on the critical path) or
overlapped with the kernels (``comm``: :func:`accelkit.roofline.times`, overlapped).

    >>> from accelkit import run_sums
    >>> run_sums.sum_max(1.0, 0.5, 2.0, 0.0, 0.0, 0, 4) == sum(max(1 + 0.5 * k, 2.0)
    ...                                                       for k in range(4))
    True
    >>> run_sums.overlapped_sum(0.0, [(1.0, 1.0, 0.0, 0.0, 0.0)], 2.5, 0, 4)  # 2.5 2.5 3 4
    12.0
"""

from __future__ import annotations

import math

from accelkit import roofline

#: One growing operation of a run: compute seconds ``c0 + c1·k``, memory seconds
#: ``m0 + m1·k``, and its fixed per-kernel cost.
Line = tuple[float, float, float, float, float]


def kernel_seconds(base: float, lines: list[Line], k: int
             ) -> float:
    """Iteration ``k``'s kernel seconds: ``base`` plus each line's roofline at ``k``."""
    total = base
    for c0, c1, m0, m1, fixed in lines:
        total += max(c0 + c1 * k, m0 + m1 * k, fixed)
    return total


def iteration_seconds(base: float, lines: list[Line],
               comm: float | None, k: int) -> float:
    """Iteration ``k``'s seconds: its kernels, with overlapped collectives of ``comm`` seconds
    behind them (:func:`accelkit.serving_step.timing`'s rule) unless ``comm`` is None (already in ``base``)."""
    kernels = kernel_seconds(base, lines, k)
    if comm is None:
        return kernels
    return float(roofline.times(compute_seconds=kernels, communication_seconds=comm,
                                overlap=True).seconds)


def overlapped_sum(base: float, lines: list[Line],
                    comm: float, start: int, stop: int) -> float:
    """``sum(iteration_seconds(base, lines, comm, k) for k in range(start, stop))``, exactly: the
    kernels' seconds never fall with ``k`` (every slope >= 0), so the iterations the collectives
    outlast come first; find where the kernels catch up (a bisection), then the collectives'
    seconds for those before and the kernels' closed-form sum for the rest."""
    if stop <= start:
        return 0.0
    low, high = start, stop          # the first k whose kernels take at least comm
    while low < high:
        mid = (low + high) // 2
        if kernel_seconds(base, lines, mid) >= comm:
            high = mid
        else:
            low = mid + 1
    return (comm * (low - start) + base * (stop - low)
            + sum(sum_max(*line, low, stop) for line in lines))


def sum_max(c0: float, c1: float, m0: float, m1: float, fixed: float, start: int,
             stop: int) -> float:
    """``sum(max(c0 + c1*k, m0 + m1*k, fixed) for k in range(start, stop))``, exactly: the max
    of lines with slopes >= 0 is piecewise linear, and each piece's integer points are an
    arithmetic series."""
    cuts = [start, stop]
    for a0, a1, b0, b1 in ((c0, c1, m0, m1), (c0, c1, fixed, 0.0), (m0, m1, fixed, 0.0)):
        if a1 != b1:
            x = (b0 - a0) / (a1 - b1)        # where the two lines cross
            if start < x < stop:
                cuts.append(math.ceil(x))
    cuts.sort()
    total = 0.0
    for lo, hi in zip(cuts, cuts[1:]):
        if hi <= lo:
            continue
        mid = 0.5 * (lo + hi - 1)
        compute, memory = c0 + c1 * mid, m0 + m1 * mid
        if compute >= memory and compute >= fixed:
            a, s = c0, c1
        elif memory >= fixed:
            a, s = m0, m1
        else:
            a, s = fixed, 0.0
        m = hi - lo
        total += a * m + s * (lo + hi - 1) * m / 2.0
    return total


__all__ = ["Line", "iteration_seconds", "kernel_seconds", "overlapped_sum", "sum_max"]
