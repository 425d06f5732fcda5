"""Exercise checkers, one module per lesson: ``from accelkit.exercises import ex05``.

``ex05.q1.check(answer)`` says correct / incorrect (with a nudge that names a common slip where
one matches, never the answer) / not attempted; ``ex05.q1.hint()`` gives progressive hints;
``ex05.q1.solution()`` shows the solution only when asked. Function questions show a small
teaching case with expected and got; explain-questions are answered by picking the true
statements. See :mod:`accelkit.exercises._core`.
"""

from __future__ import annotations

import importlib
from typing import Any

from accelkit.exercises._core import (CORRECT, INCORRECT, NOT_ATTEMPTED, ChoiceQuestion,
                                      ExplainQuestion, FunctionQuestion, NumberQuestion, Outcome)

__all__ = ["CORRECT", "INCORRECT", "NOT_ATTEMPTED", "ChoiceQuestion", "ExplainQuestion",
           "FunctionQuestion", "NumberQuestion", "Outcome"] + [f"ex{n:02d}" for n in range(1, 12)]


def __getattr__(name: str) -> Any:
    if name.startswith("ex") and name[2:].isdigit():
        try:
            module = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError:
            raise AttributeError(f"no exercise module {name!r}") from None
        globals()[name] = module
        return module
    raise AttributeError(f"module 'accelkit.exercises' has no attribute {name!r}")


def questions(module: Any) -> dict[str, Any]:
    """The questions an exercise module defines, by name (q1, q2, ...)."""
    from accelkit.exercises._core import Question

    return {name: value for name, value in vars(module).items() if isinstance(value, Question)}
