"""Write docs/plans.md: 90-minute, 3-hour and full-day workshop plans whose minutes add up.

Run: ``python docs/make_plans.py``. The minutes come from ``docs/timings.json`` (written by
``python benchmarks/lesson_timings.py --write``: a range of minutes derived from each notebook's
measured content at the rates it states, of which a plan uses the middle), the prerequisites from
lesson 00's course map and the lesson headers (docs/course_map.py: what a lesson *needs*, and what it
only finds *helpful*), the exercise questions and scenarios from the library, and the hub's memory
sizing from ``docs/hub/measured_memory.json`` (``python benchmarks/kernel_memory.py``). Each plan
starts with the minutes for signing in (:data:`ROUTES`: named assumptions, with what they depend
on) and ends with what to cut when the room runs late (:func:`cuts`: ordered, each cut's minutes,
every prerequisite kept). tests/test_plans.py fails when the committed page is not what this script
writes from ``docs/timings.json``, when a plan's minutes do not add up to its slot, when its slack
is under 10% of its teaching time, when a lesson comes before one it needs, when a cut breaks that,
or when the course map and the lesson headers disagree.

``docs/timings.json`` may lag the notebooks' text by ``MINUTES_TOLERANCE`` (see there):
tests/test_glossary.py counts each notebook's text now and fails only past it, so a reworded
sentence does not fail the suite; ``python docs/regenerate.py`` makes everything exact again.
"""

from __future__ import annotations

import importlib
import json
import math
import sys
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "docs"))

import course_map  # noqa: E402

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
# The lessons that learner went through: 00 to 10 (lesson 11 came after, in issue 25).
LEARNER_LESSONS = tuple(f"{n:02d}" for n in range(11))
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
# The plans budget the hub's minutes: docs/instructors.md recommends a hub for a room (on Binder a
# session dies in any break longer than its idle limit); each plan says what Binder would add.
BUDGETED_ROUTE = "hub"


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


# Each plan holds what fits its slot at the middle of each lesson's range (lessons/NN headers show
# the range), after the minutes for signing in (SIGN_IN): the course's lessons take about 8.8 hours
# (lesson 00's map), so no single day holds them all, and every plan names what it leaves for homework.
PLANS = (
    Plan("90-minutes", "90 minutes", "Why matrix units, and why does a TPU build one big one?", 90,
         (lesson("03"), exercise("03", "q1", "q2", "q3", "q4", "q5")),
         "lesson 02 (the GPU's answer: many small units and flexible lanes) and exercises 01 and 02; "
         "the course goes on with lesson 04 (what a big array wastes on small matrices), then 05, 06, "
         "07, 08, 09 and 10, and lesson 11 (at scale) after 07 and 08", ("00", "01")),
    Plan("3-hours", "3 hours", "What bounds my model on each chip, and what does serving it cost?", 180,
         (lesson("05"), exercise("05", "q1"), pause(10), lesson("08")),
         "the rest of exercise 05 and all of exercise 08; lessons 02, 03 and 04, then 06, 07, 09 and 10 (its "
         "scenarios), and 11 (experts, scale-up domains, long context) to finish the course", ("00", "01")),
    Plan("full-day", "Full day (7 hours)", "Which accelerator for my model, at my scale and latency?", 420,
         (lesson("03"), lesson("05"), pause(10), lesson("06"), pause(40, "lunch"), lesson("07"),
          pause(10), lesson("08")),
         "lesson 02 (the GPU), 04 and 09, then lesson 10 and its decision-lab scenarios in pairs "
         "(chatbot, pretrain, recommender); exercises 03, 05, 07 and 08; the course goes on with "
         "lesson 11 (at scale) and its exercise", ("00", "01")),
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
    """Lesson number -> the lessons it needs, from the 'needs' column of lesson 00's course map
    (docs/course_map.py reads it, and the lesson headers, which tests/test_plans.py holds equal)."""
    return {number: set(p.needs) for number, p in course_map.from_map().items()}


def helpful() -> dict[str, set[str]]:
    """Lesson number -> the lessons it refers back to but can do without (the map's 'helpful:')."""
    return {number: set(p.helpful) for number, p in course_map.from_map().items()}


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


def summary(plan: Plan, rows: dict[str, dict], route: str = BUDGETED_ROUTE) -> dict[str, int]:
    totals = {"lesson": 0, "exercise": 0, "scenarios": 0, "break": 0}
    for item in plan.items:
        totals[item.kind] += item_minutes(item, rows)
    planned = sum(totals.values())
    totals["sign_in"] = sign_in_minutes(plan, route)
    totals["slack"] = plan.slot_minutes - planned - totals["sign_in"]
    totals["teaching"] = plan.slot_minutes - totals["break"] - totals["sign_in"]
    return totals


# --- signing in and opening the link (assumptions) ---------------------------------------------

@dataclass(frozen=True)
class Route:
    """How the room reaches the course, and the minutes that costs: named assumptions, not
    measurements (nothing in this repository times a room signing in; tests/test_hub.py starts
    servers on one machine, not a cluster)."""

    key: str
    name: str
    start_minutes: int    # from the slot's start until the last learner has the first lesson open and running
    again_minutes: int    # after a break longer than idle_minutes: the server is gone, start again
    idle_minutes: int     # a server with no activity for this long is stopped
    idle_source: str
    why: str


def _hub_idle_minutes() -> int:
    import yaml

    config = yaml.safe_load(HUB_CONFIG.read_text(encoding="utf-8"))
    return int(config["cull"]["timeout"]) // 60


HUB_CONFIG = ROOT / "docs" / "hub" / "config.yaml"
ROUTES = {
    "hub": Route(
        "hub", "the course's JupyterHub (docs/hub)", 5, 3, _hub_idle_minutes(),
        "`cull.timeout` in docs/hub/config.yaml",
        "accounts approved before the session (docs/hub/README.md, step 4) and each learner signed in "
        "once already, for the lesson 00 pre-work; user nodes created and the image pre-pulled before "
        "the session, so a server starts without waiting for a new node or an image pull, which take "
        "minutes; the time goes to the room: finding the link, a forgotten password (five wrong ones "
        "lock an account for 10 minutes: pair that learner with a neighbour), opening the first "
        "lesson and running its first cell"),
    "binder": Route(
        "binder", "mybinder.org (the README's badge)", 10, 5, 10,
        "mybinder.org's limit, in docs/instructors.md",
        "the instructor launched the badge an hour before, so the image is built and cached (an "
        "unbuilt image takes several minutes more, and every commit to the course makes a new one); "
        "each launch still waits for a server on mybinder.org's shared machines, thirty at once from "
        "one repository; after a break longer than its idle limit each learner relaunches the badge "
        "and uploads the notebooks they downloaded before it (docs/instructors.md, Binder)"),
}


def sign_in_minutes(plan: Plan, route: str = BUDGETED_ROUTE) -> int:
    """Minutes a plan's slot spends signing in: at the start, and again after each break longer
    than the route's idle limit."""
    way = ROUTES[route]
    again = sum(1 for item in plan.items if item.kind == "break" and item.minutes_given > way.idle_minutes)
    return way.start_minutes + way.again_minutes * again


# --- what to cut when running late ----------------------------------------------------------------

@dataclass(frozen=True)
class Cut:
    what: str
    minutes: int          # what it saves in the slot
    plan: Plan            # the plan without it (and without what went with it)


def _per_question(plan: Plan) -> tuple[Item, ...]:
    """The plan's items, with each exercise split into one item per question, so each can be cut."""
    out: list[Item] = []
    for item in plan.items:
        if item.kind in ("exercise", "scenarios"):
            out += [Item(item.kind, item.lesson, (q,)) for q in item.questions]
        else:
            out.append(item)
    return tuple(out)


def _joined(items: list[Item]) -> tuple[Item, ...]:
    """Adjacent single-question items of one exercise joined again. Breaks stay, even one left
    last: a late room still needs its break, so a cut saves teaching minutes only."""
    out: list[Item] = []
    for item in items:
        if out and item.kind in ("exercise", "scenarios") and out[-1].kind == item.kind \
                and out[-1].lesson == item.lesson:
            out[-1] = Item(item.kind, item.lesson, out[-1].questions + item.questions)
        else:
            out.append(item)
    return tuple(out)


def _label(item: Item) -> str:
    if item.kind == "lesson":
        return f"lesson {item.lesson}"
    if item.kind == "exercise":
        return f"exercise {item.lesson} {', '.join(item.questions)}"
    return f"scenario {', '.join(item.questions)}"


def cuts(plan: Plan, rows: dict[str, dict] | None = None) -> list[Cut]:
    """What to cut, in order, when the session runs late; each cut moves to the homework.

    At each step the candidates are the items whose removal leaves the plan's order valid
    (:func:`check_order`: no remaining lesson needs a cut one; a lesson's exercise goes with it)
    and at least one lesson in it. Exercise questions go first (a learner can do them alone: the
    checkers check them), the last one in the plan first; then lessons that no remaining lesson
    finds helpful before those that one does, the latest first (lateness piles up, so the end of
    the session is always still ahead). The minutes saved are the plan's minutes before less after.
    """
    rows = timings() if rows is None else rows
    helps = helpful()
    current = replace(plan, items=_per_question(plan))
    order: list[Cut] = []
    while True:
        lessons_left = {i.lesson for i in current.items if i.kind == "lesson"}
        candidates = []
        for index, item in enumerate(current.items):
            if item.kind == "break":
                continue
            if item.kind == "lesson":
                kept = [i for i in current.items if i is not item and not (
                    i.kind in ("exercise", "scenarios") and i.lesson == item.lesson)]
            else:
                kept = [i for i in current.items if i is not item]
            trial = replace(plan, items=_joined(kept))
            if not any(i.kind == "lesson" for i in trial.items) or check_order(trial):
                continue
            helped = item.kind == "lesson" and any(item.lesson in helps[n] for n in lessons_left)
            rank = (0 if item.kind != "lesson" else 1, helped, -index)
            candidates.append((rank, item, kept))
        if not candidates:
            return order
        _, item, kept = min(candidates, key=lambda c: c[0])
        trimmed = replace(plan, items=_joined(kept))
        before = summary(replace(plan, items=_joined(list(current.items))), rows)["slack"]
        saved = summary(trimmed, rows)["slack"] - before
        went = " and its exercise" if item.kind == "lesson" and any(
            i.kind == "exercise" and i.lesson == item.lesson for i in current.items) else ""
        order.append(Cut(_label(item) + went, saved, trimmed))
        current = replace(plan, items=_per_question(trimmed))


def skipped_helpful(plan: Plan) -> dict[str, set[str]]:
    """Lesson -> the lessons it finds helpful that the plan holds neither before it nor as pre-work."""
    helps, seen, found = helpful(), set(plan.prework), {}
    for item in plan.items:
        if item.kind == "lesson":
            missing = helps[item.lesson] - seen
            if missing:
                found[item.lesson] = missing
            seen.add(item.lesson)
    return found


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


def _clock(minutes: int) -> str:
    return f"{minutes // 60}:{minutes % 60:02d}"


def _numbers(numbers: set[str] | frozenset[str]) -> str:
    ordered = sorted(numbers)
    return ordered[0] if len(ordered) == 1 else ", ".join(ordered[:-1]) + " and " + ordered[-1]


def _needs_sentence() -> str:
    needs = prerequisites()
    return ", ".join(f"{number} after {_numbers(needs[number])}" for number in sorted(needs) if needs[number])


def _sign_in_section() -> list[str]:
    hub, binder = ROUTES["hub"], ROUTES["binder"]
    budgeted = ROUTES[BUDGETED_ROUTE]
    return [
        "## Signing in and opening the link", "",
        f"Each plan's first row is the room signing in: {budgeted.start_minutes} minutes on "
        f"{budgeted.name}, from the slot's start until the last learner has the first lesson open and its "
        f"first cell run. **These minutes are an assumption**, not a measurement: nothing here has timed "
        "a room signing in. What they depend on:", "",
        "| route | at the start | after a break longer than the idle limit | idle limit | assumes |",
        "|---|---:|---:|---:|---|",
        *(f"| {way.name} | {way.start_minutes} | {way.again_minutes} | {way.idle_minutes} minutes "
          f"({way.idle_source}) | {way.why} |" for way in (hub, binder)),
        "",
        f"The plans budget {budgeted.name.split(' (')[0]}; each says what {binder.name.split(' (')[0]} "
        "would add and which cuts pay for it. A first sign-in (signing up, waiting for approval, a new "
        "password) is not in any slot: it happens with the lesson 00 pre-work, which is also the "
        "rehearsal that shows who cannot get in. Time your own room once and put its figures in "
        "`ROUTES` in `docs/make_plans.py`.",
    ]


def _plan_section(plan: Plan, rows: dict[str, dict]) -> list[str]:
    totals = summary(plan, rows)
    lines = [f"## {plan.title}: {plan.question}", ""]
    if plan.prework:
        alone = sum(item_minutes(lesson(n), rows) for n in plan.prework)
        lines += ["Before the session, each learner runs " + " and ".join(
            _describe(lesson(n)) for n in plan.prework) + f" alone ({alone} minutes): lesson 00 "
            "checks that their setup works, so the session starts with the first lesson below.", ""]
    way = ROUTES[BUDGETED_ROUTE]
    lines += ["| starts at | minutes | what |", "|---:|---:|---|",
              f"| 0:00 | {way.start_minutes} | sign in and open the first lesson (an assumption: "
              "\"Signing in\" above) |"]
    clock = way.start_minutes
    for item in plan.items:
        minutes = item_minutes(item, rows)
        lines.append(f"| {_clock(clock)} | {minutes} | {_describe(item)} |")
        clock += minutes
        if item.kind == "break" and item.minutes_given > way.idle_minutes:
            lines.append(f"| {_clock(clock)} | {way.again_minutes} | sign in again: the server stopped "
                         "during the break |")
            clock += way.again_minutes
    lines.append(f"| {_clock(clock)} | {totals['slack']} | slack: questions, discussion, a slow machine |")
    share = totals["slack"] / totals["teaching"]
    lines += ["", f"Signing in {totals['sign_in']} + lessons {totals['lesson']} + exercises "
              f"{totals['exercise']} + scenarios {totals['scenarios']} + breaks {totals['break']} + slack "
              f"{totals['slack']} = **{plan.slot_minutes} minutes**; slack is {share:.0%} of the "
              f"{totals['teaching']} teaching minutes.", ""]
    skipped = skipped_helpful(plan)
    if skipped:
        lines += ["Helpful, not needed, and left for homework: " + ", ".join(
            f"lesson {number} refers back to {_numbers(missing)}" for number, missing in sorted(skipped.items()))
            + " (each lesson's header says what for).", ""]
    lines += [f"Homework: {plan.homework}.", ""]
    order = cuts(plan, rows)
    lines += ["**When you run late.** The first "
              f"{totals['slack']} minutes late come out of the slack. Past that, cut in this order "
              "(each cut keeps every remaining lesson's prerequisites and joins the homework; skip a line "
              "you have already taught):", "",
              "| cut | saves | late by up to |", "|---|---:|---:|"]
    late = totals["slack"]
    for cut in order:
        late += cut.minutes
        lines.append(f"| {cut.what} | {cut.minutes} | {late} |")
    lines.append("")
    for route, way_b in ROUTES.items():
        if route == BUDGETED_ROUTE:
            continue
        extra = sign_in_minutes(plan, route) - totals["sign_in"]
        slack = totals["slack"] - extra
        needed = cuts_for(plan, route, rows)
        advice = (f"the plan still keeps {MIN_SLACK_SHARE:.0%} slack" if needed == 0 else
                  f"make the first {'cut' if needed == 1 else f'{needed} cuts'} above to keep "
                  f"{MIN_SLACK_SHARE:.0%} slack" if needed is not None else "no cut above is enough")
        lines += [f"On {way_b.name}: signing in takes {sign_in_minutes(plan, route)} minutes instead of "
                  f"{totals['sign_in']}, so the slack falls to {slack}; {advice}.", ""]
    return lines


def cuts_for(plan: Plan, route: str, rows: dict[str, dict]) -> int | None:
    """How many cuts, in order, restore the minimum slack when the room signs in by ``route``."""
    for count, trimmed in enumerate([plan] + [cut.plan for cut in cuts(plan, rows)]):
        totals = summary(trimmed, rows, route)
        if totals["slack"] >= MIN_SLACK_SHARE * totals["teaching"]:
            return count
    return None


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
    taken = [r for name, r in rows.items() if name.startswith("lessons/") and name[8:10] in LEARNER_LESSONS]
    lines = ["# Workshop plans", "",
             "Generated by `python docs/make_plans.py`; do not edit by hand. Minutes per lesson and per "
             f"exercise come from `{meta['command']}` ({meta['measured_on']}, {meta['machine']}): each "
             "notebook's measured content at a quick learner's and a careful learner's rates "
             f"({ranges}; `benchmarks/lesson_timings.py` says why each is what it is). A lesson's header "
             "shows that range; a plan uses its middle. For lessons 00–10 the range is "
             f"{sum(r['minutes_low'] for r in taken)}–{sum(r['minutes_high'] for r in taken)} minutes "
             f"and its middle {sum(r['planned_minutes'] for r in taken)}: about what a learner who went "
             f"through them took ({LEARNER_LESSON_HOURS:g} hours); all {len(lessons)} lessons' middle is "
             f"{sum(r['planned_minutes'] for r in lessons)}. An exercise question in class is its task time "
             "plus its share of the exercise notebook's reading. A decision-lab scenario is "
             f"{MINUTES_PER_SCENARIO} minutes (3 to try and record a choice in pairs, 2 for one pair to "
             "defend it). The rates are assumptions: replace them with what you see in your first "
             "session and run `python docs/regenerate.py`.", "",
             "No plan below holds the whole course: each takes what fits its slot, keeps the prerequisites "
             f"that lesson 00's course map and each lesson's header state ({_needs_sentence()}) and names "
             "the rest as homework. A lesson that only finds an earlier one *helpful* can do without it; "
             "each plan says where it leaves a helpful lesson for homework. "
             f"Every plan keeps at least {MIN_SLACK_SHARE:.0%} of its teaching time (the slot less its "
             "breaks and signing in) as slack for questions and for machines that are slower than ours.", "",
             *_sign_in_section(), ""]
    for plan in PLANS:
        lines += _plan_section(plan, rows)
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
