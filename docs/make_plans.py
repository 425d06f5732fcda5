"""Write docs/plans.md: 90-minute, 3-hour and full-day workshop plans whose minutes add up.

Run: ``python docs/make_plans.py``. The minutes come from ``docs/timings.json`` (written by
``python benchmarks/lesson_timings.py --write``: a range of minutes derived from each notebook's
measured content at the rates it states, of which a plan uses the middle), the prerequisites from lesson 00's course map (its "needs"
column), the exercise questions and scenarios from the library, and the hub's memory sizing from
``docs/hub/measured_memory.json`` (``python benchmarks/kernel_memory.py``). tests/test_plans.py
fails when the committed page is not what this script writes from ``docs/timings.json``, when a
plan's minutes do not add up to its slot, when its slack is under 10% of its teaching time, or when
a lesson comes before one it needs.

``docs/timings.json`` may lag the notebooks' text by ``MINUTES_TOLERANCE`` (see there):
tests/test_glossary.py counts each notebook's text now and fails only past it, so a reworded
sentence does not fail the suite; ``python docs/regenerate.py`` makes everything exact again.
"""

from __future__ import annotations

import importlib
import json
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import nbformat  # noqa: E402

TIMINGS = ROOT / "docs" / "timings.json"
MEMORY = ROOT / "docs" / "hub" / "measured_memory.json"
# An assumption, like the rates in benchmarks/lesson_timings.py: in pairs, load a scenario in the
# decision lab, try its knobs and record a choice (3 minutes), then one pair defends theirs (2).
MINUTES_PER_SCENARIO = 5
MIN_SLACK_SHARE = 0.10
# What a learner took for the eleven lessons, working through the course alone (issue 24; lessons 05,
# 07 and 08 took 60, 90 and 70 minutes). Validation data for the minutes, not their calibration:
# the rates in benchmarks/lesson_timings.py come from reading research and what each item asks.
LEARNER_LESSON_HOURS = 8.8
LEARNER_LESSON_MINUTES = {"05": 60, "07": 90, "08": 70}
# How far a notebook's planned minutes in docs/timings.json (and so its header, the course map and
# the plans, all written from that file) may differ from what its text would get now, before the
# tests ask for `python docs/regenerate.py`. One minute: the rates behind the minutes are
# assumptions far less certain than that (the header states a range twenty minutes wide for a
# long lesson), so a stated range that is a minute off is as true as the exact one; and a minute
# is about 125 words of prose (one code cell, a fifth of a widget), so a fixed typo or a reworded
# paragraph never fails the suite, while a new section, widget or exercise question does until
# the timings are regenerated. A one-word edit moves the estimate by 1/125 minute, so it can move
# the rounded minutes by at most one.
MINUTES_TOLERANCE = 1


@dataclass(frozen=True)
class Item:
    kind: str  # "lesson", "exercise", "scenarios", "break"
    lesson: str = ""
    questions: tuple[str, ...] = ()
    minutes_given: int = 0  # breaks only


def lesson(number: str) -> Item:
    return Item("lesson", number)


def exercise(number: str, *questions: str) -> Item:
    return Item("exercise", number, questions)


def scenarios(*keys: str) -> Item:
    return Item("scenarios", "10", keys)


def pause(minutes: int, name: str = "break") -> Item:
    return Item("break", name, (), minutes)


@dataclass(frozen=True)
class Plan:
    key: str
    title: str
    question: str
    slot_minutes: int
    items: tuple[Item, ...]
    homework: str
    # Lessons each learner runs alone before the session (lesson 00 checks their setup works): they
    # count for prerequisites and for hub memory, not for the slot's minutes.
    prework: tuple[str, ...] = ()
    # Minutes at the start of the slot for signing in to the hub (0 until they are measured; a
    # later issue sets them, and cut-lists that trim a lesson to fit, per item).
    sign_in_minutes: int = 0


# Each plan holds what fits its slot at the middle of each lesson's range (lessons/NN headers show
# the range): the course's lessons take about 8.8 hours (lesson 00's map), so no single day holds
# them all, and every plan names what it leaves for homework.
PLANS = (
    Plan("90-minutes", "90 minutes", "Why matrix units, and why does a TPU build one big one?", 90,
         (lesson("01"), lesson("03")),
         "lesson 02 (the GPU's answer: many small units and flexible lanes) and exercises 01, 02 "
         "and 03; the course goes on with lesson 04 (what a big array wastes on small matrices), "
         "then 05, 06, 07, 08, 09 and 10", ("00",)),
    Plan("3-hours", "3 hours", "What bounds my model on each chip, and what does serving it cost?", 180,
         (lesson("05"), exercise("05", "q1", "q2"), pause(10), lesson("08")),
         "the rest of exercise 05 and all of exercise 08; lessons 02, 03 and 04, then 06, 07, 09 and 10 (its "
         "scenarios) to finish the course", ("00", "01")),
    Plan("full-day", "Full day (7 hours)", "Which accelerator for my model, at my scale and latency?", 420,
         (lesson("03"), lesson("05"), pause(15), lesson("06"), pause(45, "lunch"), lesson("07"),
          pause(10), lesson("08")),
         "lesson 02 (the GPU), 04 and 09, then lesson 10 and its decision-lab scenarios in pairs "
         "(chatbot, pretrain, recommender); exercises 03, 05, 07 and 08", ("00", "01")),
)


def timings() -> dict[str, dict]:
    data = json.loads(TIMINGS.read_text(encoding="utf-8"))
    return {row["notebook"]: row for row in data["notebooks"]}


def drift(notebook: str, rows: dict[str, dict] | None = None) -> int:
    """Planned minutes ``notebook`` (``"lessons/05_roofline.ipynb"``) would get from its text now,
    less those docs/timings.json holds for it (counted, not executed: benchmarks/lesson_timings.py)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import lesson_timings

    rows = timings() if rows is None else rows
    return lesson_timings.count(ROOT / notebook)["planned_minutes"] - rows[notebook]["planned_minutes"]


def _notebook(kind: str, number: str) -> str:
    folder = "lessons" if kind == "lesson" else "exercises"
    found = sorted((ROOT / folder).glob(f"{number}_*.ipynb"))
    if len(found) != 1:
        raise ValueError(f"no single {folder}/{number}_*.ipynb")
    return f"{folder}/{found[0].name}"


def prerequisites() -> dict[str, set[str]]:
    """Lesson number -> the lessons it needs, from the 'needs' column of lesson 00's course map."""
    notebook = nbformat.read(ROOT / "lessons" / "00_start_here.ipynb", as_version=4)
    table = next(c.source for c in notebook.cells if c.cell_type == "markdown" and "| needs |" in c.source)
    lessons = sorted(p.name[:2] for p in (ROOT / "lessons").glob("[0-9][0-9]_*.ipynb"))
    needs: dict[str, set[str]] = {"00": set()}
    for row in table.splitlines():
        match = re.match(r"\| \[(\d\d) ·.*\| ([^|]+) \|$", row)
        if not match:
            continue
        number, cell = match.group(1), match.group(2).strip()
        if cell == "this notebook":
            needs[number] = {"00"}
        elif cell == "all":
            needs[number] = {n for n in lessons if n < number}
        else:
            needs[number] = set(re.findall(r"\d\d", cell))
    return needs


def item_minutes(item: Item, rows: dict[str, dict]) -> int:
    if item.kind == "break":
        return item.minutes_given
    if item.kind == "lesson":
        return rows[_notebook("lesson", item.lesson)]["planned_minutes"]
    if item.kind == "exercise":
        row = rows[_notebook("exercise", item.lesson)]
        share = len(item.questions) / row["tasks"]
        quick, careful = json.loads(TIMINGS.read_text(encoding="utf-8"))["rates"]["minutes_per_exercise_task"]
        return math.ceil(row["reading_minutes"] * share + (quick + careful) / 2 * len(item.questions))
    if item.kind == "scenarios":
        return MINUTES_PER_SCENARIO * len(item.questions)
    raise ValueError(f"unknown item kind {item.kind!r}")


def check_order(plan: Plan) -> list[str]:
    """What breaks the plan's order: lessons before their prerequisites, exercises before lessons."""
    needs, seen, problems = prerequisites(), set(plan.prework), []
    for item in plan.items:
        if item.kind == "lesson":
            missing = needs[item.lesson] - seen
            if missing:
                problems.append(f"lesson {item.lesson} needs {', '.join(sorted(missing))} first")
            seen.add(item.lesson)
        elif item.kind in ("exercise", "scenarios") and item.lesson not in seen:
            problems.append(f"{item.kind} of lesson {item.lesson} before the lesson")
    return problems


def summary(plan: Plan, rows: dict[str, dict]) -> dict[str, int]:
    totals = {"lesson": 0, "exercise": 0, "scenarios": 0, "break": 0}
    for item in plan.items:
        totals[item.kind] += item_minutes(item, rows)
    planned = sum(totals.values())
    totals["sign_in"] = plan.sign_in_minutes
    totals["slack"] = plan.slot_minutes - planned - plan.sign_in_minutes
    totals["teaching"] = plan.slot_minutes - totals["break"] - plan.sign_in_minutes
    return totals


def _describe(item: Item) -> str:
    if item.kind == "lesson":
        return f"lesson [{item.lesson}](../{_notebook('lesson', item.lesson)})"
    if item.kind == "exercise":
        from accelkit.exercises import questions

        module = importlib.import_module(f"accelkit.exercises.ex{item.lesson}")
        asked = questions(module)
        short = "; ".join(f"{q}: {asked[q].prompt.split('?')[0].split('.')[0][:70]}…" for q in item.questions)
        return f"exercise [{item.lesson}](../{_notebook('exercise', item.lesson)}) {', '.join(item.questions)} ({short})"
    if item.kind == "scenarios":
        from accelkit.scenarios import SCENARIOS

        return "decision-lab scenarios, in pairs: " + "; ".join(
            f"`{key}` ({SCENARIOS[key].title})" for key in item.questions)
    return item.lesson


# --- hub memory per learner (docs/hub/config.yaml) -------------------------------------------

def memory() -> dict:
    return json.loads(MEMORY.read_text(encoding="utf-8"))


def memory_guarantee_mib() -> int:
    """Server plus the largest lesson kernel and the largest exercise kernel, at their peaks."""
    data = memory()
    lessons = [r["kernel_peak_mb"] for r in data["notebooks"] if r["notebook"].startswith("lessons/")]
    exercises = [r["kernel_peak_mb"] for r in data["notebooks"] if r["notebook"].startswith("exercises/")]
    return data["server_peak_mb"] + max(lessons) + max(exercises)


def memory_limit_mib(plan_key: str = "3-hours") -> int:
    """Server plus every kernel the plan opens, all left running, each at its peak."""
    data = memory()
    peak = {r["notebook"]: r["kernel_peak_mb"] for r in data["notebooks"]}
    plan = next(p for p in PLANS if p.key == plan_key)
    opened = {_notebook("lesson" if i.kind == "lesson" else "exercise", i.lesson)
              for i in plan.items if i.kind in ("lesson", "exercise")}
    opened |= {_notebook("lesson", number) for number in plan.prework}
    return data["server_peak_mb"] + sum(peak[n] for n in opened)


def render() -> str:
    rows = timings()
    meta = json.loads(TIMINGS.read_text(encoding="utf-8"))
    rates = meta["rates"]
    ranges = ", ".join(f"{min(rates[key]):g}–{max(rates[key]):g} {unit}" for key, unit in (
        ("words_per_minute", "words/min"), ("minutes_per_code_cell", "min per code cell"),
        ("minutes_per_widget", "min per widget"), ("minutes_per_worked_problem", "min per worked problem"),
        ("minutes_per_question", "min per check-yourself question"),
        ("minutes_per_exercise_task", "min per exercise question")))
    lessons = [r for name, r in rows.items() if name.startswith("lessons/")]
    lines = ["# Workshop plans", "",
             "Generated by `python docs/make_plans.py`; do not edit by hand. Minutes per lesson and per "
             f"exercise come from `{meta['command']}` ({meta['measured_on']}, {meta['machine']}): each "
             "notebook's measured content at a quick learner's and a careful learner's rates "
             f"({ranges}; `benchmarks/lesson_timings.py` says why each is what it is). A lesson's header "
             "shows that range; a plan uses its middle. For all eleven lessons the range is "
             f"{sum(r['minutes_low'] for r in lessons)}–{sum(r['minutes_high'] for r in lessons)} minutes "
             f"and its middle {sum(r['planned_minutes'] for r in lessons)}: about what a learner who went "
             f"through every lesson took ({LEARNER_LESSON_HOURS:g} hours). An exercise question in class is its task time "
             "plus its share of the exercise notebook's reading. A decision-lab scenario is "
             f"{MINUTES_PER_SCENARIO} minutes (3 to try and record a choice in pairs, 2 for one pair to "
             "defend it). The rates are assumptions: replace them with what you see in your first "
             "session and run `python docs/regenerate.py`.", "",
             "No plan below holds the whole course: each takes what fits its slot, keeps lesson 00's "
             "prerequisites (02 and 03 after 01, 04 after 03, 05 after 01, 06 after 03 and 05, 07 after "
             "05 and 06, 08 after 05, 09 after 02 and 03, 10 after all) and names the rest as homework. "
             f"Every plan keeps at least {MIN_SLACK_SHARE:.0%} of its teaching time (the slot less its "
             "breaks) as slack for questions and for machines that are slower than ours.", ""]
    for plan in PLANS:
        totals = summary(plan, rows)
        lines += [f"## {plan.title}: {plan.question}", "",
                  "| starts at | minutes | what |", "|---:|---:|---|"]
        if plan.prework:
            alone = sum(item_minutes(lesson(n), rows) for n in plan.prework)
            lines[-2:-2] = ["Before the session, each learner runs " + " and ".join(
                _describe(lesson(n)) for n in plan.prework) + f" alone ({alone} minutes): lesson 00 "
                "checks that their setup works, so the session starts with the first lesson below.", ""]
        clock = 0
        for item in plan.items:
            minutes = item_minutes(item, rows)
            lines.append(f"| {clock // 60}:{clock % 60:02d} | {minutes} | {_describe(item)} |")
            clock += minutes
        lines.append(f"| {clock // 60}:{clock % 60:02d} | {totals['slack']} | slack: questions, discussion, "
                     "a slow machine |")
        share = totals["slack"] / totals["teaching"]
        lines += ["", f"Lessons {totals['lesson']} + exercises {totals['exercise']} + scenarios "
                  f"{totals['scenarios']} + breaks {totals['break']} + slack {totals['slack']} = "
                  f"**{plan.slot_minutes} minutes**; slack is {share:.0%} of the {totals['teaching']} "
                  "teaching minutes.", "", f"Homework: {plan.homework}.", ""]
    data = memory()
    lines += ["## Hub memory per learner", "",
              f"From `{data['command']}` ({data['measured_on']}, {data['machine']}): a JupyterLab server "
              f"peaks at {data['server_peak_mb']} MiB; lesson kernels peak at "
              f"{min(r['kernel_peak_mb'] for r in data['notebooks'] if r['notebook'].startswith('lessons/'))}–"
              f"{max(r['kernel_peak_mb'] for r in data['notebooks'] if r['notebook'].startswith('lessons/'))} MiB, "
              f"exercise kernels at {max(r['kernel_peak_mb'] for r in data['notebooks'] if r['notebook'].startswith('exercises/'))} "
              f"MiB, an idle kernel at {data['idle_kernel_peak_mb']} MiB.", "",
              f"- guarantee: server + largest lesson kernel + largest exercise kernel = "
              f"**{memory_guarantee_mib()} MiB** (a learner with a lesson and its exercise open);",
              f"- limit: server + every kernel the 3-hour plan opens, all left running = "
              f"**{memory_limit_mib()} MiB** (the full day's would be {memory_limit_mib('full-day')} MiB; "
              "closing a tab shuts its kernel down, and the culler stops kernels whose tab closed).", "",
              "`docs/hub/config.yaml` reserves at least these; tests/test_hub_recipe.py checks it.", ""]
    return "\n".join(lines).rstrip() + "\n"


def main() -> None:
    for plan in PLANS:
        problems = check_order(plan)
        if problems:
            raise SystemExit(f"{plan.key}: {'; '.join(problems)}")
    (ROOT / "docs" / "plans.md").write_text(render(), encoding="utf-8")
    print("wrote docs/plans.md")
    for plan in PLANS:
        totals = summary(plan, timings())
        print(f"{plan.key:11s} slot {plan.slot_minutes:3d}  planned {plan.slot_minutes - totals['slack']:3d}  "
              f"slack {totals['slack']:3d} ({totals['slack'] / totals['teaching']:.0%} of teaching)")
    print(f"hub memory per learner: guarantee >= {memory_guarantee_mib()} MiB, limit >= {memory_limit_mib()} MiB")


if __name__ == "__main__":
    main()
