"""The workshop plans add up and keep prerequisites; docs/plans.md is what docs/make_plans.py writes.

The page is compared exactly with what the script writes from docs/timings.json: a prose edit in a
lesson does not change that file (tests/test_glossary.py lets the file lag the text by
make_plans.MINUTES_TOLERANCE), so it does not fail here."""

from __future__ import annotations

import sys

import pytest

from tests.notebook_runner import ROOT

sys.path.insert(0, str(ROOT / "docs"))

import make_plans  # noqa: E402


def test_plans_page_is_up_to_date():
    committed = (ROOT / "docs" / "plans.md").read_text(encoding="utf-8")
    assert committed == make_plans.render(), "run: python docs/make_plans.py"


def test_there_are_90_minute_3_hour_and_full_day_plans():
    slots = sorted(plan.slot_minutes for plan in make_plans.PLANS)
    assert slots[:2] == [90, 180] and slots[2] >= 360, slots


@pytest.mark.parametrize("plan", make_plans.PLANS, ids=lambda p: p.key)
def test_minutes_add_up_with_slack(plan):
    rows = make_plans.timings()
    totals = make_plans.summary(plan, rows)
    planned = sum(make_plans.item_minutes(item, rows) for item in plan.items)
    # Every item's minutes, breaks and slack make exactly the slot; the slack is real and enough.
    assert planned + totals["slack"] == plan.slot_minutes
    assert totals["lesson"] + totals["exercise"] + totals["scenarios"] + totals["break"] == planned
    assert totals["slack"] >= make_plans.MIN_SLACK_SHARE * totals["teaching"], totals
    page = (ROOT / "docs" / "plans.md").read_text(encoding="utf-8")
    assert f"slack {totals['slack']} = **{plan.slot_minutes} minutes**" in page


@pytest.mark.parametrize("plan", make_plans.PLANS, ids=lambda p: p.key)
def test_prerequisites_hold(plan):
    assert make_plans.check_order(plan) == []
    kinds = {item.kind for item in plan.items}
    assert "lesson" in kinds


def test_lesson_minutes_are_the_measured_ones():
    rows = make_plans.timings()
    for path in sorted((ROOT / "lessons").glob("[0-9][0-9]_*.ipynb")):
        key = f"lessons/{path.name}"
        assert key in rows, f"{key} missing from docs/timings.json: run benchmarks/lesson_timings.py --write"
        assert make_plans.item_minutes(make_plans.lesson(path.name[:2]), rows) == rows[key]["planned_minutes"]


def test_prerequisites_are_read_from_the_course_map():
    needs = make_plans.prerequisites()
    assert needs["03"] == {"01"} and needs["06"] == {"03", "05"}
    assert needs["10"] == {f"{n:02d}" for n in range(10)}
    # A plan that runs 03 before 02's prerequisite fails the check.
    bad = make_plans.Plan("bad", "bad", "?", 90, (make_plans.lesson("00"), make_plans.lesson("03")), "")
    assert make_plans.check_order(bad) == ["lesson 03 needs 01 first"]
    late = make_plans.Plan("late", "late", "?", 90, (make_plans.exercise("05", "q1"),), "")
    assert make_plans.check_order(late) == ["exercise of lesson 05 before the lesson"]


def test_exercise_questions_and_scenarios_exist():
    from accelkit.exercises import questions
    from accelkit.scenarios import SCENARIOS
    import importlib

    for plan in make_plans.PLANS:
        for item in plan.items:
            if item.kind == "exercise":
                asked = questions(importlib.import_module(f"accelkit.exercises.ex{item.lesson}"))
                assert set(item.questions) <= set(asked), (plan.key, item)
            if item.kind == "scenarios":
                assert set(item.questions) <= set(SCENARIOS), (plan.key, item)


def test_prework_counts_for_prerequisites_and_memory_but_not_minutes():
    alone = make_plans.Plan("alone", "alone", "?", 90, (make_plans.lesson("01"),), "", ("00",))
    assert make_plans.check_order(alone) == []
    without = make_plans.Plan("without", "without", "?", 90, (make_plans.lesson("01"),), "")
    assert make_plans.check_order(without) == ["lesson 01 needs 00 first"]
    rows = make_plans.timings()
    assert make_plans.summary(alone, rows) == make_plans.summary(without, rows)
    page = (ROOT / "docs" / "plans.md").read_text(encoding="utf-8")
    for plan in make_plans.PLANS:
        if plan.prework:
            minutes = sum(rows[f"lessons/{make_plans._notebook('lesson', n)[8:]}"]["planned_minutes"]
                          for n in plan.prework)
            assert f"alone ({minutes} minutes)" in page


def test_the_minutes_land_near_what_a_learner_took():
    rows = make_plans.timings()
    # the lessons that learner went through (make_plans.LEARNER_LESSONS), not those added since
    lessons = [r for name, r in rows.items() if name.startswith("lessons/")
               and name[len("lessons/"):][:2] in make_plans.LEARNER_LESSONS]
    assert len(lessons) == len(make_plans.LEARNER_LESSONS)
    low = sum(r["minutes_low"] for r in lessons)
    high = sum(r["minutes_high"] for r in lessons)
    planned = sum(r["planned_minutes"] for r in lessons)
    learner = make_plans.LEARNER_LESSON_HOURS * 60
    assert low < learner < high and abs(planned - learner) < 0.1 * learner, (low, planned, high)
    for number, took in make_plans.LEARNER_LESSON_MINUTES.items():
        row = next(r for name, r in rows.items() if name.startswith(f"lessons/{number}_"))
        # inside the range, or within a tenth above its careful end (lesson 07: 90 against 84)
        assert row["minutes_low"] < took <= 1.1 * row["minutes_high"], (number, took, row)


def test_no_plan_pretends_to_hold_the_whole_course():
    rows = make_plans.timings()
    whole = sum(r["planned_minutes"] for name, r in rows.items() if name.startswith("lessons/"))
    for plan in make_plans.PLANS:
        assert plan.slot_minutes < whole
        taught = {i.lesson for i in plan.items if i.kind == "lesson"} | set(plan.prework)
        missing = {p.name[:2] for p in (ROOT / "lessons").glob("[0-9][0-9]_*.ipynb")} - taught
        assert all(f"{n}" in plan.homework for n in missing - {"00"}), (plan.key, missing, plan.homework)
