"""The course's repository address, said once, and the two links built from it.

The address is ``[project.urls] Repository`` in pyproject.toml; nothing else spells it. From it:
the Binder badge's target (README.md's badge) and the nbgitpuller link a hub's learners click
(docs/hub/README.md). ``python docs/hub/links.py`` prints both; tests/test_hub_recipe.py checks
that the README's badge and the guide's link are these. Move the course (a fork, a mirror): change
pyproject.toml, run this, paste the two links.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[2]
FIRST_LESSON = "lessons/00_start_here.ipynb"
#: The folder nbgitpuller clones the course into, in each learner's home; config.yaml puts it
#: first on PYTHONPATH (tests/test_hub_recipe.py checks the two agree).
TARGET = "accelkit-course"
BRANCH = "main"


def repository() -> str:
    """The course's git address (https), from pyproject.toml."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return project["urls"]["Repository"]


def _github_path(url: str) -> str:
    match = re.fullmatch(r"https://github\.com/([\w.-]+/[\w.-]+?)(?:\.git)?/?", url)
    if not match:
        raise ValueError(f"the Binder badge needs a GitHub repository address, got {url!r}")
    return match.group(1)


def binder_url(lesson: str = FIRST_LESSON) -> str:
    """mybinder.org's launch address for the repository, opening JupyterLab on ``lesson``."""
    return f"https://mybinder.org/v2/gh/{_github_path(repository())}/HEAD?urlpath=lab/tree/{lesson}"


def binder_badge() -> str:
    return f"[![Binder](https://mybinder.org/badge_logo.svg)]({binder_url()})"


def gitpull_link(hub: str = "https://<your-hub>", lesson: str = FIRST_LESSON) -> str:
    """The link learners click on a hub: clone (or update) the course, then open ``lesson``."""
    return (f"{hub}/hub/user-redirect/git-pull?repo={quote(repository(), safe='')}&branch={BRANCH}"
            f"&targetpath={TARGET}&urlpath=lab/tree/{TARGET}/{lesson}")


if __name__ == "__main__":
    print(f"repository:      {repository()}")
    print(f"Binder badge:    {binder_badge()}")
    print(f"nbgitpuller link: {gitpull_link()}")
