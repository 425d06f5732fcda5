"""Build everything the course publishes, in one command: ``python publish/build.py``.

Into ``build/course/`` (or ``--out DIR``):

* ``executed/`` and ``measured_memory.json``: every lesson and exercise run once in a fresh kernel
  by benchmarks/kernel_memory.py, its memory measured, the executed notebooks kept with their
  widget state. The book and the slides are made from these runs (no second execution);
  tests/test_hub_memory.py compares the figures with docs/hub/measured_memory.json.
* ``book/``: the static, printable book (publish/book.py).
* ``slides/``: one reveal.js deck per lesson (publish/slides.py).
* ``grading/``: the student versions of the exercises, their hidden tests, and a grading run of a
  solved and an unsolved copy (publish/grading.py, nbgrader).
* ``lite/``: the JupyterLite site, the course in a browser tab (publish/lite.py).
* ``report.json``: what each step made and how long it took.

The grading and JupyterLite steps need no notebook run, so they start at once, beside the
measured run; the book and the slides start when it ends, side by side. ``--only`` picks steps
(``--only book,slides`` still runs the notebooks first; ``--executed DIR`` reuses a run).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

STEPS = ("run", "book", "slides", "grading", "lite")


def _timed(name: str, function, *args) -> dict:
    started = time.perf_counter()
    try:
        result = function(*args)
        return {"step": name, "ok": True, "seconds": round(time.perf_counter() - started, 1), "result": result}
    except Exception as error:  # reported per step, so one failure does not hide the others
        return {"step": name, "ok": False, "seconds": round(time.perf_counter() - started, 1),
                "error": f"{type(error).__name__}: {error}", "traceback": traceback.format_exc()[-6000:]}


def run_notebooks(out: Path) -> dict:
    import kernel_memory

    measured = kernel_memory.measure(keep=out / "executed", workers=2, progress=False)
    (out / "measured_memory.json").write_text(json.dumps(measured, indent=1) + "\n", encoding="utf-8")
    return {"notebooks": len(measured["notebooks"])}


def build(out: Path, only: set[str] | None = None, executed: Path | None = None) -> dict:
    from publish import book, grading, lite, slides

    only = set(STEPS) if only is None else only
    out.mkdir(parents=True, exist_ok=True)
    work = out / "work"
    steps: dict[str, dict] = {}
    started = time.perf_counter()
    with ThreadPoolExecutor(4) as pool:
        early: dict[str, Future] = {}
        if "grading" in only:
            early["grading"] = pool.submit(_timed, "grading", grading.build, out / "grading", work / "grading")
        if "lite" in only:
            early["lite"] = pool.submit(_timed, "lite", lite.build, out / "lite", work / "lite")
        needs_run = only & {"book", "slides"} or "run" in only
        if executed is None and needs_run:
            steps["run"] = _timed("run", run_notebooks, out)
            executed = out / "executed"
        later: dict[str, Future] = {}
        if executed is not None and steps.get("run", {"ok": True})["ok"]:
            if "book" in only:
                later["book"] = pool.submit(_timed, "book", book.build, executed, out / "book", work / "book")
            if "slides" in only:
                later["slides"] = pool.submit(_timed, "slides", slides.build, executed, out / "slides",
                                              work / "slides")
        for name, future in {**early, **later}.items():
            steps[name] = future.result()
    report = {"seconds": round(time.perf_counter() - started, 1), "steps": steps}
    (out / "report.json").write_text(json.dumps(report, indent=1, default=str), encoding="utf-8")
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "course")
    parser.add_argument("--only", help=f"comma-separated steps among {', '.join(STEPS)}")
    parser.add_argument("--executed", type=Path, help="reuse executed notebooks from this folder")
    args = parser.parse_args()
    only = set(args.only.split(",")) if args.only else None
    if only and not only <= set(STEPS):
        parser.error(f"--only takes {', '.join(STEPS)}; got {args.only}")
    report = build(args.out, only, args.executed)
    for name, step in report["steps"].items():
        print(f"{name:8s} {'ok' if step['ok'] else 'FAILED':6s} {step['seconds']:6.1f} s")
        if not step["ok"]:
            print(step["traceback"], file=sys.stderr)
    print(f"all: {report['seconds']} s, in {args.out}")
    sys.exit(0 if all(step["ok"] for step in report["steps"].values()) else 1)


if __name__ == "__main__":
    main()
