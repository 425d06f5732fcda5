"""The package type-checks: mypy, configured in pyproject.toml's [tool.mypy], reports no errors.

mypy is in the ``test`` extra, so under CI this always runs; it is skipped (saying why) only in an
environment where mypy was not installed.
"""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

needs_mypy = pytest.mark.skipif(
    importlib.util.find_spec("mypy") is None,
    reason="mypy is not installed: pip install -e '.[test]' brings it",
)


@needs_mypy
def test_package_type_checks_with_no_errors() -> None:
    # No arguments: mypy reads files and strictness from pyproject.toml, as a developer's `mypy`.
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-error-summary"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    report = (result.stdout + result.stderr).strip()
    assert result.returncode == 0, f"mypy found errors (exit {result.returncode}):\n{report}"


def test_every_lazy_submodule_is_declared_for_type_checkers() -> None:
    """``ak.energy`` is typed only if accelkit/__init__.py imports it under TYPE_CHECKING."""
    tree = ast.parse((ROOT / "accelkit" / "__init__.py").read_text(encoding="utf-8"))
    submodules: set[str] = set()
    declared: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "_SUBMODULES" for t in node.targets):
            submodules = set(ast.literal_eval(node.value))
        if (isinstance(node, ast.If) and isinstance(node.test, ast.Name)
                and node.test.id == "TYPE_CHECKING"):
            for stmt in ast.walk(node):
                if isinstance(stmt, ast.ImportFrom) and stmt.module == "accelkit":
                    declared.update(alias.name for alias in stmt.names)
    assert submodules, "accelkit/__init__.py no longer defines _SUBMODULES"
    missing = sorted(submodules - declared)
    assert not missing, f"lazy submodules not imported under TYPE_CHECKING: {missing}"
