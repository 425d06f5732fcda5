"""The npm tools publish/ builds with (publish/package.json, pinned by publish/package-lock.json).

``npm ci --prefix publish`` installs them into ``publish/node_modules`` (.ci/run does it, and
:func:`ensure` does it when they are missing); node itself comes from the system (Debian's
``nodejs``). Nothing is fetched at build time beyond that install, and nothing at view time.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
MODULES = HERE / "node_modules"


def ensure() -> None:
    """Install the pinned npm tools when they are not there yet."""
    if (MODULES / ".package-lock.json").exists() and all(
            (MODULES / name).is_dir() for name in ("mystmd", "katex", "reveal.js", "pyodide")):
        return
    if shutil.which("npm") is None:
        raise RuntimeError("npm is not installed: publish/ needs node and npm (Debian: apt-get "
                           "install nodejs npm; .ci/run installs them)")
    done = subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--prefix", str(HERE)],
                          capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"npm ci --prefix publish failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")


def myst() -> list[str]:
    ensure()
    return ["node", str(MODULES / "mystmd" / "dist" / "myst.cjs")]


def offline_env() -> dict[str, str]:
    """The environment MyST runs in: no telemetry prompt, no colour codes in its log."""
    return {**os.environ, "NO_COLOR": "1", "FORCE_COLOR": "0", "MYST_NO_TELEMETRY": "1"}


def copy_katex(destination: Path) -> None:
    """KaTeX's style sheet and fonts (MyST typesets formulas with KaTeX; the page styles them)."""
    ensure()
    dist = MODULES / "katex" / "dist"
    destination.mkdir(parents=True, exist_ok=True)
    shutil.copy(dist / "katex.min.css", destination / "katex.min.css")
    shutil.copytree(dist / "fonts", destination / "fonts", dirs_exist_ok=True)


def reveal() -> Path:
    ensure()
    return MODULES / "reveal.js"


def pyodide() -> Path:
    ensure()
    return MODULES / "pyodide"
