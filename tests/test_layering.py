"""The library computes, widgets render, notebooks narrate: checked on the source.

Lessons and the lesson-claim tests take numbers from ``accelkit`` modules; from
``accelkit.widgets`` they may import only the widget constructors each topic module lists in its
``__all__``. No claim test imports a private name. Widget modules define no public helper beyond
those constructors, and every worked problem is a :class:`WorkedProblem`.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import pkgutil
from pathlib import Path

import pytest

import accelkit.widgets as widgets_package
from accelkit.widgets._worked import WorkedProblem

ROOT = Path(__file__).resolve().parents[1]
LESSONS = sorted((ROOT / "lessons").glob("*.ipynb"))
CLAIM_TESTS = sorted((ROOT / "tests").glob("test_lesson_*_claims.py"))


def _topic_modules():
    for info in pkgutil.iter_modules(widgets_package.__path__):
        if not info.name.startswith("_"):
            yield importlib.import_module(f"accelkit.widgets.{info.name}")


WIDGET_NAMES = {name for module in _topic_modules() for name in getattr(module, "__all__", ())}


def _notebook_source(path: Path) -> str:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    # IPython magics and shell lines are not Python: blank them out
    return "\n".join("\n".join("" if line.lstrip().startswith(("%", "!")) else line
                               for line in cell.splitlines()) for cell in code)


def _imports(source: str):
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                yield node.module, alias.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, None


SOURCES = [(p.name, _notebook_source(p)) for p in LESSONS] + [
    (p.name, p.read_text(encoding="utf-8")) for p in CLAIM_TESTS]


@pytest.mark.parametrize("name, source", SOURCES, ids=[n for n, _ in SOURCES])
def test_only_widget_constructors_come_from_accelkit_widgets(name, source):
    for module, imported in _imports(source):
        assert not module.startswith("accelkit.widgets."), (
            f"{name} imports {imported or module} from {module}: take numbers from the library")
        if module == "accelkit.widgets":
            assert imported in WIDGET_NAMES, f"{name} imports {imported!r}, not a widget constructor"


@pytest.mark.parametrize("path", CLAIM_TESTS, ids=[p.name for p in CLAIM_TESTS])
def test_claim_tests_import_no_private_name(path):
    for module, imported in _imports(path.read_text(encoding="utf-8")):
        if module.startswith("accelkit"):
            parts = module.split(".") + ([imported] if imported else [])
            assert not any(p.startswith("_") for p in parts[1:]), f"{path.name}: {module}.{imported}"


def test_widget_modules_define_no_public_helpers():
    for module in _topic_modules():
        exported = set(getattr(module, "__all__", ()))
        for name, value in vars(module).items():
            if name.startswith("_") or name in exported:
                continue
            defined_here = getattr(value, "__module__", None) == module.__name__
            assert not (defined_here and (inspect.isfunction(value) or inspect.isclass(value))), (
                f"{module.__name__}.{name} is a public helper: computation belongs in accelkit/")


def test_every_worked_problem_is_a_worked_problem():
    factories = sorted(n for n in WIDGET_NAMES if n.endswith("worked_problem"))
    assert len(factories) == 11
    for name in factories:
        assert isinstance(getattr(widgets_package, name)(), WorkedProblem), name


# -- the library's own modules: imports flow one way, and only public names cross -----------

PACKAGE = ROOT / "accelkit"


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _library_imports(path: Path):
    """(module imported, name or None) for every accelkit import anywhere in the file,
    function-level imports included."""
    for module, name in _imports(path.read_text(encoding="utf-8")):
        if not module.startswith("accelkit"):
            continue
        if name is not None and f"{module}.{name}" in MODULES:
            yield f"{module}.{name}", None
        else:
            yield module, name


def test_no_import_circle_between_library_modules():
    graph = {m: {dep for dep, _ in _library_imports(p) if dep in MODULES and dep != "accelkit"}
             for m, p in MODULES.items()}
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for dep in sorted(graph[node]):
            assert state.get(dep) != 1, "import circle: " + " -> ".join(
                path[path.index(dep):] + [node, dep] if dep in path else [node, dep])
            if dep not in state:
                visit(dep, path + [node])
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [])


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_module_uses_a_private_name_of_another(name):
    # Neither an imported private name nor a private attribute of anything but the object's
    # own class (self, cls): what one module needs of another (a model's widths, a chip's
    # peaks) is public. Private *modules* (_validate, _html, widgets._base) are shared on
    # purpose; their names are public to the package.
    path = MODULES[name]
    for module, imported in _library_imports(path):
        assert not (imported or "").startswith("_"), f"{name} imports {module}.{imported}"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") \
                and not node.attr.startswith("__"):
            value = node.value
            owner = value.id if isinstance(value, ast.Name) else None
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
                owner = value.func.id + "()"   # super()._x: the class's own hierarchy
            assert owner in ("self", "cls", "super()"), f"{name} reads {ast.unparse(node)}"
