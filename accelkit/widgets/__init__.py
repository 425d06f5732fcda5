"""Widgets for the lessons: each gathers inputs, calls the library, and draws the result.

Every function here returns an :class:`~accelkit.widgets._base.Explorer` (or a small container of
them). The widgets do no modelling of their own: the numbers come from the engines and the cost
models. Each topic's widgets live in their own module (``accelkit/widgets/<topic>.py``) and are
found by name here, so ``from accelkit.widgets import roofline_explorer`` works without this file
listing every widget.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

from accelkit.widgets._base import Explorer, View


def _topic_modules() -> list[str]:
    return [m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")]


def __getattr__(name: str) -> Any:
    if name.startswith("_"):
        raise AttributeError(name)
    for module_name in _topic_modules():
        module = importlib.import_module(f"{__name__}.{module_name}")
        if name in getattr(module, "__all__", ()):
            value = getattr(module, name)
            globals()[name] = value
            return value
    raise AttributeError(f"accelkit.widgets has no widget {name!r}")


def __dir__() -> list[str]:
    names = set(globals())
    for module_name in _topic_modules():
        module = importlib.import_module(f"{__name__}.{module_name}")
        names.update(getattr(module, "__all__", ()))
    return sorted(names)


__all__ = ["Explorer", "View"]
