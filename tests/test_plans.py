"""The workshop plans add up and keep prerequisites; docs/plans.md is what docs/make_plans.py writes.

The page is compared exactly with what the script writes from docs/timings.json: a prose edit in a
lesson does not change that file (tests/test_glossary.py lets the file lag the text by
make_plans.MINUTES_TOLERANCE), so it does not fail here."""

from __future__ import annotations

import sys

import pytest

from tests.notebook_runner import ROOT

sys.path.insert(0, str(ROOT / "docs"))

import course_map  # noqa: E402
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
    # Signing in, every item's minutes, breaks and slack make exactly the slot; the slack is real and enough.
    assert totals["sign_in"] == make_plans.sign_in_minutes(plan) > 0
    assert totals["sign_in"] + planned + totals["slack"] == plan.slot_minutes
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
    assert needs["03"] == {"01"} and needs["06"] == {"03", "05"} and needs["05"] == {"01"}
    assert needs["10"] == {"07", "08", "09"}
    # ... and through them lesson 10 needs every lesson before it but 04, which it finds helpful.
    assert course_map.closure("10", course_map.from_map()) == {f"{n:02d}" for n in range(10)} - {"04"}
    assert make_plans.helpful()["10"] == {"04"} and make_plans.helpful()["08"] == {"06", "07"}
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


# --- the lesson headers, the course map and the plans are one source -----------------------------

def test_each_lesson_header_states_what_the_course_map_states():
    assert course_map.disagreements() == []
    headers = course_map.from_headers()
    assert set(headers) == {p.name[:2] for p in (ROOT / "lessons").glob("[0-9][0-9]_*.ipynb")}
    # The two lessons whose headers named what the 3-hour plan skips: 05 needs only 01 (it uses
    # nothing of 04), and 08 needs 05, with 06 and 07 only helpful.
    assert headers["05"] == course_map.Prerequisites(frozenset({"01"}))
    assert headers["08"] == course_map.Prerequisites(frozenset({"05"}), frozenset({"06", "07"}))


def test_a_header_that_disagrees_with_the_course_map_fails():
    stated = course_map.from_map()
    header = ("# 05 · x\n\n*Before this:* needs [lesson 04 · shapes](04_shapes_and_utilization.ipynb) and "
              "[lesson 01](01_why_matmul.ipynb) ([FLOPs](../docs/glossary.md#flop)); helpful, not needed: "
              "[lesson 02](02_gpu_simd.ipynb). About 45–72 minutes.\n\nMore [lesson 03](03_tpu_systolic.ipynb).")
    parsed = course_map.parse_header(header)
    assert parsed == course_map.Prerequisites(frozenset({"04", "01"}), frozenset({"02"}))
    headers = {**course_map.from_headers(), "05": parsed}
    assert course_map.disagreements(stated, headers) == [
        "lesson 05 needs: course map 01, header 01, 04", "lesson 05 helpful: course map nothing, header 02"]
    # a map that names a later lesson, or a lesson with no row, fails too
    later = {**stated, "04": course_map.Prerequisites(frozenset({"03", "06"}))}
    headers = {**course_map.from_headers(), "04": later["04"]}
    assert course_map.disagreements(later, headers) == ["lesson 04 names a lesson that is not before it: 03, 06"]
    missing = {k: v for k, v in stated.items() if k != "09"}
    assert course_map.disagreements(missing) == ["lesson 09 has no row in lesson 00's course map"]


def test_a_new_lesson_joins_with_a_header_and_a_course_map_row():
    table = course_map.map_table() + (
        "\n| [11 · Next](11_next.ipynb) | something new | 30–40 | 05, 08; helpful: 10 |")
    stated = course_map.from_map([table])
    assert stated["11"] == course_map.Prerequisites(frozenset({"05", "08"}), frozenset({"10"}))
    header = course_map.parse_header("# 11 · Next\n\n*Before this:* needs [lesson 05](05_roofline.ipynb) and "
                                     "[lesson 08](08_inference.ipynb); helpful, not needed: "
                                     "[lesson 10](10_decision_lab.ipynb). About 30–40 minutes.")
    assert course_map.disagreements(stated, {**course_map.from_headers(), "11": header}) == []
    with pytest.raises(ValueError, match="helpful"):
        course_map.parse_map_cell("11", "05; maybe: 10", course_map.lesson_numbers())


def test_each_plan_names_the_helpful_lessons_it_leaves_for_homework():
    page = (ROOT / "docs" / "plans.md").read_text(encoding="utf-8")
    three = next(p for p in make_plans.PLANS if p.key == "3-hours")
    assert make_plans.skipped_helpful(three) == {"08": {"06", "07"}}
    assert "lesson 08 refers back to 06 and 07" in page
    for plan in make_plans.PLANS:
        for number, missing in make_plans.skipped_helpful(plan).items():
            assert all(n in plan.homework for n in missing), (plan.key, number, missing)


# --- signing in ----------------------------------------------------------------------------------

def test_signing_in_is_a_named_assumption_with_what_it_depends_on():
    import yaml

    page = (ROOT / "docs" / "plans.md").read_text(encoding="utf-8")
    assert "**These minutes are an assumption**" in page
    config = yaml.safe_load((ROOT / "docs" / "hub" / "config.yaml").read_text(encoding="utf-8"))
    assert make_plans.ROUTES["hub"].idle_minutes == config["cull"]["timeout"] // 60
    for way in make_plans.ROUTES.values():
        assert f"| {way.name} | {way.start_minutes} | {way.again_minutes} | {way.idle_minutes} minutes" in page
    for plan in make_plans.PLANS:
        section = page.split(f"## {plan.title}:")[1].split("\n## ")[0]
        first = section.split("|---:|---:|---|\n")[1].splitlines()[0]
        assert first.startswith(f"| 0:00 | {make_plans.ROUTES[make_plans.BUDGETED_ROUTE].start_minutes} | sign in")


def test_a_break_longer_than_the_idle_limit_costs_a_second_sign_in():
    long_break = make_plans.Plan("x", "x", "?", 180, (make_plans.lesson("01"), make_plans.pause(70),
                                                       make_plans.lesson("02")), "", ("00",))
    hub = make_plans.ROUTES["hub"]
    assert make_plans.sign_in_minutes(long_break) == hub.start_minutes + hub.again_minutes
    binder = make_plans.ROUTES["binder"]
    day = next(p for p in make_plans.PLANS if p.key == "full-day")
    breaks = [i.minutes_given for i in day.items if i.kind == "break"]
    assert make_plans.sign_in_minutes(day, "binder") == binder.start_minutes + binder.again_minutes * sum(
        1 for b in breaks if b > binder.idle_minutes)


# --- what to cut when late -----------------------------------------------------------------------

@pytest.mark.parametrize("plan", make_plans.PLANS, ids=lambda p: p.key)
def test_the_cuts_keep_prerequisites_and_their_minutes_add_up(plan):
    rows = make_plans.timings()
    order = make_plans.cuts(plan, rows)
    assert order, plan.key
    before = make_plans.summary(plan, rows)
    for cut in order:
        assert make_plans.check_order(cut.plan) == [], (plan.key, cut.what)
        assert any(i.kind == "lesson" for i in cut.plan.items)
        assert cut.minutes > 0
        # breaks are never cut: a late room still needs them
        assert [i for i in cut.plan.items if i.kind == "break"] == [i for i in plan.items if i.kind == "break"]
    after = make_plans.summary(order[-1].plan, rows)
    assert sum(cut.minutes for cut in order) == after["slack"] - before["slack"]
    kinds = [cut.what.split()[0] for cut in order]
    assert kinds == sorted(kinds, key=lambda k: k == "lesson"), "exercise questions go before lessons"
    page = (ROOT / "docs" / "plans.md").read_text(encoding="utf-8")
    section = page.split(f"## {plan.title}:")[1].split("\n## ")[0]
    late = before["slack"]
    for cut in order:
        late += cut.minutes
        assert f"| {cut.what} | {cut.minutes} | {late} |" in section
    needed = make_plans.cuts_for(plan, "binder", rows)
    assert needed is not None
    trimmed = ([plan] + [c.plan for c in order])[needed]
    totals = make_plans.summary(trimmed, rows, "binder")
    assert totals["slack"] >= make_plans.MIN_SLACK_SHARE * totals["teaching"]


def test_a_lesson_another_needs_is_never_cut_before_it():
    plan = make_plans.Plan("x", "x", "?", 300, (make_plans.lesson("03"), make_plans.lesson("05"),
                                                 make_plans.lesson("06"), make_plans.exercise("03", "q1", "q2")),
                           "", ("00", "01"))
    # exercise questions first (the last first), then 06 (which needs 03 and 05), then 05; 03 stays
    assert [c.what for c in make_plans.cuts(plan)] == ["exercise 03 q2", "exercise 03 q1", "lesson 06", "lesson 05"]
    # a lesson a remaining lesson finds helpful (02, for 03) goes after those nothing finds helpful,
    # even when it comes earlier: 05, then 03, and 02 stays
    plan = make_plans.Plan("y", "y", "?", 300, (make_plans.lesson("02"), make_plans.lesson("03"),
                                                 make_plans.lesson("05")), "", ("00", "01"))
    assert [c.what for c in make_plans.cuts(plan)] == ["lesson 05", "lesson 03"]


def test_the_instructors_guide_states_the_sign_in_assumptions_the_plans_use():
    guide = (ROOT / "docs" / "instructors.md").read_text(encoding="utf-8")
    hub, binder = make_plans.ROUTES["hub"], make_plans.ROUTES["binder"]
    assert f"{hub.start_minutes} minutes on the course's hub" in guide
    assert (f"Binder's ({binder.start_minutes} at the start and {binder.again_minutes}\n    more after every "
            f"break longer than its {binder.idle_minutes} idle minutes") in guide
    assert f"about **{binder.idle_minutes} minutes without activity**" in guide
