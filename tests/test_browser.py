"""End to end, as a learner meets the course: JupyterLab in a real (headless) Chromium.

One JupyterLab server (127.0.0.1, random port and token, the current virtual environment, a
temporary copy of ``lessons/``) and one Chromium page serve every lesson: each lesson found in
``lessons/`` by its file name is opened, run with JupyterLab's own *Run All Cells* command, checked
for errors (the notebook model's outputs, the rendered page, the browser console), and then a
control of its first interactive explorer is moved with the keyboard, as a learner would, and the
picture (the PNG bytes behind the widget's <img>) and the summary text must both change.
Lesson 03's control is its systolic-array animation's cycle slider.

This is the suite's one run of each lesson through JupyterLab (its others are kernel-only runs,
tests/conftest.py); it is kept because what it proves, that the front end renders every widget
and a learner's move reaches the kernel and comes back redrawn, no kernel-only run can show.

Screenshots before and after each move go to ``test-artifacts/browser/`` (gitignored).
Needs Debian's ``chromium`` (``.ci/run`` installs it); outside CI a machine without it skips
these tests with the reason, under CI (``CI=true``) its absence is a failure.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path

import pytest

from tests import lab_harness as lab

ROOT = lab.ROOT
ARTIFACTS = ROOT / "test-artifacts" / "browser"
LESSONS = sorted(p.name for p in (ROOT / "lessons").glob("[0-9][0-9]_*.ipynb"))

# Which control to move, by lesson number: a regular expression matched against the slider's
# label. Lessons not listed move the first slider of their first explorer.
PREFERRED_CONTROL = {
    "03": re.compile(r"cycle", re.IGNORECASE),  # the systolic-array animation
}

# Console lines that are not errors of ours. Each entry says why it is harmless.
HARMLESS_CONSOLE = [
    # (none needed so far: JupyterLab's news and update checks are switched off by lab_harness,
    # which removes the only network-related messages seen on this closed machine)
]

pytestmark = pytest.mark.deploy


def _require_browser() -> None:
    reasons = []
    if not lab.CHROMIUM.exists():
        reasons.append(f"{lab.CHROMIUM} is not installed (apt-get install chromium)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        reasons.append("playwright is not installed (pip install -e '.[deploy]')")
    if reasons:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("browser tests cannot run under CI: " + "; ".join(reasons))
        pytest.skip("; ".join(reasons))


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """A Chromium page on a fresh JupyterLab, shared by this module's tests."""
    _require_browser()
    from playwright.sync_api import sync_playwright

    if ARTIFACTS.exists():
        shutil.rmtree(ARTIFACTS)
    ARTIFACTS.mkdir(parents=True)
    workdir = tmp_path_factory.mktemp("lab")
    lab.copy_lessons(workdir)
    with lab.LabServer(workdir) as server, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(lab.CHROMIUM),
                                             args=lab.CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1000})
            page.console_lines = []  # (type, text), appended as they come

            page.on("console", lambda m: page.console_lines.append((m.type, m.text)))
            page.on("pageerror", lambda e: page.console_lines.append(("pageerror", str(e))))
            page.goto(server.url(""))
            page.wait_for_function(lab.JS_APP_STARTED, timeout=90_000, polling=250)
            page.evaluate(lab.JS_APP_RESTORED)
            page.server = server
            yield page
        finally:
            browser.close()


def _console_errors(lines: list[tuple[str, str]]) -> list[str]:
    return [f"{kind}: {text}" for kind, text in lines
            if kind in ("error", "pageerror") and not any(p.search(text) for p in HARMLESS_CONSOLE)]


def _errors_in_outputs(cells: list[dict]) -> list[str]:
    """Error outputs, and any traceback or stderr text, with the cell they came from."""
    problems = []
    for cell in cells:
        for output in cell["outputs"]:
            kind = output.get("output_type")
            if kind == "error":
                problems.append(f"cell {cell['index']}: {output.get('ename')}: {output.get('evalue')}")
            elif kind == "stream" and output.get("name") == "stderr":
                problems.append(f"cell {cell['index']} wrote to stderr: {output.get('text')!r:.300}")
            else:
                text = str(output.get("data", {}).get("text/plain", "")) + str(output.get("text", ""))
                if "Traceback (most recent call last)" in text:
                    problems.append(f"cell {cell['index']} shows a traceback: {text[:300]!r}")
    return problems


def _controls(box, pattern: re.Pattern | None) -> list[tuple[str, object]]:
    """The explorer's controls a learner can move, as (description, locator), preferred first.

    Sliders first (only those whose label matches ``pattern`` when it is given), then toggle
    buttons, drop-downs and check boxes.
    """
    found = []
    sliders = box.locator(".widget-slider")
    for i in range(sliders.count()):
        label = sliders.nth(i).locator(".widget-label").first.inner_text()
        if pattern is None or pattern.search(label):
            found.append((f"slider {label!r}", sliders.nth(i)))
    if pattern is not None:
        assert found, f"no slider whose label matches {pattern.pattern!r}"
        return found
    toggles = box.locator(".widget-toggle-buttons")
    found += [(f"toggle buttons #{i}", toggles.nth(i)) for i in range(toggles.count())]
    selects = box.locator("select")
    found += [(f"drop-down #{i}", selects.nth(i)) for i in range(selects.count())]
    checks = box.locator("input[type=checkbox]")
    found += [(f"check box #{i}", checks.nth(i)) for i in range(checks.count())]
    return found


def _move(page, description: str, control) -> None:
    """Move one control as a learner would: arrow keys on a slider, a click elsewhere."""
    control.scroll_into_view_if_needed()
    if description.startswith("slider"):
        handle = control.locator(".noUi-handle").first
        before = handle.get_attribute("aria-valuenow")
        handle.focus()
        handle.press("ArrowRight")
        if handle.get_attribute("aria-valuenow") == before:  # it was at its maximum
            handle.press("ArrowLeft")
    elif description.startswith("toggle"):
        control.locator("button.widget-toggle-button:not(.mod-active)").first.click()
    elif description.startswith("drop-down"):
        current = control.input_value()
        values = control.locator("option").evaluate_all("options => options.map(o => o.value)")
        control.select_option(next(v for v in values if v != current))
    else:
        control.click()


def _settled_state(page, index: int) -> dict:
    """The explorer's state once the kernel has answered and the picture has stopped changing."""
    page.wait_for_timeout(300)  # the comm message leaves the browser
    page.wait_for_function(lab.JS_KERNEL_IDLE, timeout=60_000, polling=100)
    state = page.evaluate(lab.JS_EXPLORER_STATE, index)
    for _ in range(50):
        page.wait_for_timeout(300)
        again = page.evaluate(lab.JS_EXPLORER_STATE, index)
        if again == state:
            return state
        state = again
    return state


@pytest.mark.parametrize("lesson", LESSONS)
def test_lesson_runs_and_its_widget_responds_in_a_browser(page, lesson):
    started = time.perf_counter()
    stem = lesson.removesuffix(".ipynb")
    console_start = len(page.console_lines)
    path = f"lessons/{lesson}"
    page.evaluate(lab.JS_OPEN, path)
    try:
        page.wait_for_function(lab.JS_NOTEBOOK_READY, arg=path, timeout=60_000, polling=200)
        page.evaluate(lab.JS_RUN_ALL)
        page.wait_for_function(lab.JS_ALL_DONE, timeout=240_000, polling=250)
        cells = page.evaluate(lab.JS_OUTPUTS)
        assert not _errors_in_outputs(cells), _errors_in_outputs(cells)
        panel = page.locator("#" + page.evaluate(lab.JS_CURRENT_ID))

        assert page.evaluate(lab.JS_EXPLORERS) >= 1, \
            f"{lesson} shows no explorer (controls + summary + picture)"
        box = panel.locator(lab.EXPLORER_SELECTOR).nth(0)
        box.scroll_into_view_if_needed()
        before = _settled_state(page, 0)
        assert before["png_sha256"], f"{lesson}: the explorer shows no picture"
        page_text = panel.inner_text()
        for marker in ("Error displaying widget", "Error rendering output", "Traceback"):
            assert marker not in page_text, f"{lesson}: the page shows {marker!r}"
        page.screenshot(path=str(ARTIFACTS / f"{stem}-before.png"))

        # Move controls in order until one redraws the picture (a control may legitimately only
        # change the table, e.g. a training MFU in a serving scenario); at least one must.
        unchanged = []
        for description, control in _controls(box, PREFERRED_CONTROL.get(lesson[:2])):
            _move(page, description, control)
            after = _settled_state(page, 0)
            if after["png_sha256"] != before["png_sha256"]:
                break
            unchanged.append(description)
            before = after
        else:
            pytest.fail(f"{lesson}: no control of the first explorer redrew its picture: {unchanged}")
        page.screenshot(path=str(ARTIFACTS / f"{stem}-after.png"))
        print(f"{lesson}: moved {description}; {after['sliders']}")

        assert after["src"] != before["src"]
        assert after["text"] != before["text"], \
            f"{lesson}: moving {description} redrew the picture but left the summary as it was"
        assert "⚠" not in after["text"], f"{lesson}: the widget refused its own control: {after['text']}"
        cells = page.evaluate(lab.JS_OUTPUTS)
        assert not _errors_in_outputs(cells), _errors_in_outputs(cells)
        errors = _console_errors(page.console_lines[console_start:])
        assert not errors, f"{lesson}: browser console errors: {errors}"
    finally:
        page.evaluate(lab.JS_CLOSE_CURRENT)
        print(f"{lesson}: {time.perf_counter() - started:.1f} s in the browser")
