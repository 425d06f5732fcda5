"""The evidence accelkit is checked against: published runs, kept outside the package.

The package ships the model; the repository ships the runs it is validated on, as Calculon
keeps its Megatron runs beside its model. Importable from the repository's root (pytest puts it
on ``sys.path``; a lesson in ``lessons/`` adds ``..``):

* :mod:`validation.published`: fully specified training runs (Megatron-LM SC'21 Table 1, PaLM
  540B, Llama 3 405B, MaxText on TPU v5p) and the step at each run's published degrees;
* :mod:`validation.mlperf` with ``mlperf.json``: MLPerf Training v4.0 GPT-3 175B submissions,
  for the gap lab (:mod:`accelkit.labs.mlperf`);
* :mod:`validation.totals`: whole runs with a reported total (chip-hours, days, FLOPs), for
  lesson 07's comparison with :func:`accelkit.training.estimate`;
* ``run.py``: ``python validation/run.py`` prints the validation table and writes
  docs/validation.md (``--json`` prints the rows as JSON);
* ``parallel_published_runs.py`` and ``mfu_published_runs.py``: the tables in docs/parallel.md
  and docs/mfu.md.

Nothing in ``accelkit/`` imports this folder: a widget that shows published runs takes them as
an argument.
"""
