"""MLPerf Training v4.0 GPT-3 175B submissions, as published, for the gap lab and the table.

Evidence, not model: ``validation/mlperf.json`` holds what Google (TPU v5p, MaxText) and NVIDIA
(H100, NeMo) published in the results repository (``mlcommons/training_results_v4.0``), each
figure with its file and commit. This module reads them into
:class:`accelkit.labs.mlperf.Submission` s for :func:`accelkit.labs.mlperf.explain_gap`
(lessons 05 and 07, docs/mlperf_gap.md) and for validation/run.py's per-chip rows:

    >>> from validation.mlperf import submission
    >>> s = submission("google-tpu-v5p-1024")
    >>> s.name_count, s.n_chips        # the name counts TensorCores: 512 chips
    (1024, 512)

The chip count is never stored: it is nodes x accelerators per node, checked against the
system name and the ICI topology (:func:`accelkit.labs.mlperf.chips_in_system`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from accelkit import chips, dtypes, frameworks, parallel
from accelkit.labs.mlperf import Run, Submission, chips_in_system, name_count

#: The submissions file, beside this module.
DATA = Path(__file__).resolve().with_name("mlperf.json")


def data() -> dict[str, Any]:
    """The submissions file as JSON (read each call: a few kilobytes)."""
    loaded: dict[str, Any] = json.loads(DATA.read_text(encoding="utf-8"))
    return loaded


def _choice(name: str, value: object, allowed: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{name} must be one of {list(allowed)}, got {value!r}")
    return value


def benchmarks() -> tuple[str, ...]:
    """The benchmarks in the file ("gpt3")."""
    return tuple(sorted(data()["benchmarks"]))


def submissions(benchmark: str | None = None) -> tuple[str, ...]:
    """Submission keys, all or those to one benchmark."""
    if benchmark is not None:
        _choice("benchmark", benchmark, benchmarks())
    return tuple(sorted(k for k, v in data()["submissions"].items()
                        if benchmark is None or v["benchmark"] == benchmark))


def pairs(benchmark: str = "gpt3") -> tuple[tuple[str, str, str], ...]:
    """(label, gpu submission, tpu submission): the pairs the lab compares."""
    b = data()["benchmarks"][_choice("benchmark", benchmark, benchmarks())]
    return tuple((label, g, t) for label, (g, t) in sorted(b["pairs"].items()))


def _layout(value: dict[str, Any], seq_len: int, n_chips: int) -> parallel.Layout:
    tp, pp = int(value.get("tp", 1)), int(value.get("pp", 1))
    fsdp = int(value.get("fsdp", 1))
    dp = int(value.get("dp", n_chips // (tp * pp * fsdp)))
    return parallel.Layout(dp=dp, fsdp=fsdp, tp=tp, pp=pp,
                           microbatch_tokens=int(value["microbatch_sequences"]) * seq_len,
                           recompute=value.get("recompute", "none"),
                           interleave=int(value.get("interleave", 1)))


def alternatives(key: str) -> dict[str, dict[str, str]]:
    """The other mappings recorded for a submission's named choices, by layout field: where
    the framework's choice has no exact accelkit equivalent (MaxText's
    ``save_dot_except_logits`` remat policy), ``{"recompute": {"full": why}}``; the layout's
    own value is the one used. Empty where none is recorded.

        >>> alternatives("google-tpu-v5p-12288")["recompute"].keys()
        dict_keys(['full'])
    """
    _choice("submission", key, submissions())
    found: dict[str, dict[str, str]] = data()["submissions"][key]["layout"].get(
        "alternatives", {})
    return found


def submission(key: str, *, recompute: str | None = None) -> Submission:
    """A submission by key (see :func:`submissions`), as published.

    ``recompute``: one of the submission's recorded :func:`alternatives` for its remat
    mapping (None: the mapping recorded as used), to show what the other mapping predicts.

    Raises:
        ValueError: an unknown key; a system whose name, topology and host count disagree; a
            precision the chip has no peak for; a layout that does not use the system's chips
            or is missing (record the layout, and whether it was published); a ``recompute``
            the submission records no alternative for.
    """
    everything = data()
    _choice("submission", key, submissions())
    e = everything["submissions"][key]
    if recompute is not None:
        allowed = (e["layout"]["value"]["recompute"],
                   *e["layout"].get("alternatives", {}).get("recompute", {}))
        _choice("recompute", recompute, tuple(allowed))
    bench = everything["benchmarks"][e["benchmark"]]
    seq_len = int(bench["seq_len"]["value"])
    chip = chips.get(e["chip"])
    precision = dtypes.check(_choice("precision", e["precision"]["value"], chip.dtypes),
                             "precision")
    system = e["system_name"]["value"]
    nodes = int(e["number_of_nodes"]["value"])
    per = int(e["accelerators_per_node"]["value"])
    n = chips_in_system(system, chip, nodes, per, e["topology"]["value"])
    if "layout" not in e:
        raise ValueError(f"submission {key!r} has no layout: record the one it ran (its "
                         "'published' flag says whether the submitter stated it)")
    value = dict(e["layout"]["value"])
    if recompute is not None:
        value["recompute"] = recompute
    layout = _layout(value, seq_len, n)
    if layout.chips != n:
        raise ValueError(f"submission {key!r}: layout {layout} uses {layout.chips} chips, "
                         f"the system has {n}")
    runs = tuple(Run(r["log"], int(r["run_start_ms"]), int(r["run_stop_ms"]),
                     int(r["train_tokens"]), r["source"]) for r in e["runs"])
    sources = tuple((f, e[f]["source"]) for f in (
        "system_name", "accelerator_model_name", "number_of_nodes", "accelerators_per_node",
        "topology", "precision", "layout", "global_batch_sequences", "framework", "evaluation")
        if f in e)
    ev = e["evaluation"]["value"] if "evaluation" in e else {}
    gbs = int(e["global_batch_sequences"]["value"])
    if ev and (int(ev["interval_sequences"]) % gbs
               or int(ev["batch_sequences"]) % int(ev["microbatch_sequences"])):
        raise ValueError(f"submission {key!r}: its evaluation interval must be whole steps and "
                         f"its evaluation batch whole micro-batches, got {ev}")
    timing = e["log_timing"]["value"] if "log_timing" in e else {}
    if "log_timing" in e:
        sources += (("log_timing", e["log_timing"]["source"]),)
    torus = e["topology"]["value"]
    shape = (tuple(int(a) for a in torus.lower().split("x"))
             if torus and chip.kind == "tpu" else None)
    sources += (("seq_len", bench["seq_len"]["source"]),)
    sources += tuple((f"run_{i}", r.source) for i, r in enumerate(runs))
    return Submission(key=key, benchmark=e["benchmark"], model=bench["model"],
                      submitter=e["submitter"], system_name=system, chip=chip.name, n_chips=n,
                      name_count=name_count(system), number_of_nodes=nodes,
                      accelerators_per_node=per, precision=precision, layout=layout,
                      layout_published=bool(e["layout"]["published"]),
                      global_batch_sequences=gbs,
                      seq_len=seq_len, runs=runs, sources=sources,
                      framework=frameworks.get(e["framework"]["value"]).name
                      if "framework" in e else "default",
                      eval_interval_sequences=int(ev.get("interval_sequences", 0)),
                      eval_sequences=int(ev.get("eval_sequences", 0)),
                      eval_batch_sequences=int(ev.get("batch_sequences", 0)),
                      eval_microbatch_sequences=int(ev.get("microbatch_sequences", 0)),
                      topology=shape,
                      block_seconds=float(timing.get("block_ms", 0.0)) / 1000.0,
                      logged_eval_seconds=float(timing.get("eval_ms", 0.0)) / 1000.0)


__all__ = ["DATA", "alternatives", "benchmarks", "data", "pairs", "submission", "submissions"]
