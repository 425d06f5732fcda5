"""What the lessons' labs compute, on top of the engines and the cost models.

A lab asks the library a lesson's questions, many shapes or machines at a time, and hands the
answers to a widget or a code cell; it adds no rule of its own. Each module says which lesson it
serves:

* :mod:`~accelkit.labs.shapes` (lesson 04): where a matrix unit's cell-cycles go, and how
  utilization moves with a GEMM's shape (sweeps over the systolic and SIMD engines' estimates).
* :mod:`~accelkit.labs.flexibility` (lesson 09): the same workload on the toy GPU and the toy
  TPU with a few of their assumptions as knobs, and real chips' rooflines side by side.
* :mod:`~accelkit.labs.mlperf` (lessons 05 and 07): a published GPU-against-TPU gap walked from
  the peaks to the measured ratio, one cause at a time, on submissions the caller passes in (the
  repository keeps them in validation/, outside the library).
"""
