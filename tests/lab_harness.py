"""A real JupyterLab server on loopback and a headless Chromium driving it (for test_browser.py).

The server runs from the current virtual environment in a temporary copy of ``lessons/`` (so
running cells and autosave never touch the repository), with its own settings, workspace and
runtime folders (so a developer's JupyterLab state cannot leak in), on a random free port of
127.0.0.1 with a random token. ``expose_app_in_browser`` puts the JupyterLab application object on
``window.jupyterapp``, so the test runs cells through JupyterLab's own command registry
(``notebook:run-all-cells``: the same command as the *Run → Run All Cells* menu) instead of
guessing at keyboard shortcuts, and reads the notebook model's outputs rather than scraping text.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")

#: The flags this machine needs (its network is closed: without the background-networking flags
#: Chromium keeps opening connections that are refused) and that a root user in a container needs.
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage",
]

# User settings for the test's JupyterLab. News and update checks off: they ask the internet,
# which this machine cannot reach. Windowing off: by default JupyterLab 4 only renders the cells
# near the viewport, so a widget further down would not be in the page to find and screenshot.
_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings":
        {"fetchNews": "false", "checkForUpdates": False, "doNotDisturbMode": True},
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
}


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LabServer:
    """``jupyter lab`` on 127.0.0.1 in ``workdir``; use as a context manager."""

    def __init__(self, workdir: Path):
        self.workdir = workdir
        self.port = free_port()
        self.token = secrets.token_hex(16)
        self.process: subprocess.Popen | None = None
        self.log_path = workdir / "jupyter-server.log"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, notebook: str) -> str:
        path = f"/tree/{notebook}" if notebook else ""
        return f"{self.base_url}/lab{path}?token={self.token}&reset"

    def __enter__(self) -> LabServer:
        home = self.workdir / ".home"
        settings = home / "lab-settings"
        for rel, content in _SETTINGS.items():
            path = settings / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(content), encoding="utf-8")
        env = dict(os.environ)
        env.update({
            "JUPYTERLAB_SETTINGS_DIR": str(settings),
            "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
            "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
            "JUPYTER_CONFIG_DIR": str(home / "config"),
            "MPLBACKEND": "Agg",
            "PYTHONHASHSEED": "0",
        })
        command = [
            sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root",
            "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={self.port}",
            "--ServerApp.port_retries=0", f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={self.workdir}", "--LabApp.expose_app_in_browser=True",
            "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--ServerApp.open_browser=False",
        ]
        self._log = open(self.log_path, "wb")
        self.process = subprocess.Popen(command, cwd=self.workdir, env=env, stdout=self._log,
                                        stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"jupyter lab exited early:\n{self.log()}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/api/status?token={self.token}",
                                            timeout=2) as response:
                    if response.status == 200:
                        return self
            except OSError:
                time.sleep(0.3)
        self.__exit__(None, None, None)
        raise RuntimeError(f"jupyter lab did not answer within 60 s:\n{self.log()}")

    def log(self) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")[-4000:]
        except OSError:
            return ""

    def __exit__(self, *exc: object) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        if getattr(self, "_log", None):
            self._log.close()


def copy_lessons(destination: Path) -> None:
    """The lessons and what they read beside them: validation/ (the published runs lessons 05
    and 07 import from the repository, outside the library)."""
    for folder in ("lessons", "validation"):
        shutil.copytree(ROOT / folder, destination / folder,
                        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))


# --- JavaScript run in the page (through window.jupyterapp) ------------------------------------

# The application object exists and the plugins the test calls have registered their commands.
JS_APP_STARTED = """
() => !!window.jupyterapp && window.jupyterapp.commands.hasCommand('docmanager:open')
      && window.jupyterapp.commands.hasCommand('notebook:run-all-cells')
"""

JS_APP_RESTORED = "async () => { await window.jupyterapp.restored; return true; }"

JS_OPEN = """
async (path) => {
  await window.jupyterapp.commands.execute('docmanager:open', {path, factory: 'Notebook'});
  return true;
}
"""

# The notebook at ``path`` is the current tab and its kernel is connected and idle.
JS_NOTEBOOK_READY = """
(path) => {
  const panel = window.jupyterapp.shell.currentWidget;
  if (!panel || !panel.context || panel.context.path !== path || !panel.content) return false;
  if (!panel.sessionContext.isReady) return false;
  const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
  return !!kernel && kernel.connectionStatus === 'connected' && kernel.status === 'idle'
         && panel.content.widgets.length > 0;
}
"""

JS_RUN_ALL = """
async () => {
  await window.jupyterapp.commands.execute('notebook:run-all-cells');
  return true;
}
"""

JS_KERNEL_IDLE = """
() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status === 'idle'
"""

# Every code cell has run (has an execution count) and the kernel is idle again.
JS_ALL_DONE = """
() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const kernel = panel.sessionContext.session.kernel;
  if (kernel.status !== 'idle') return false;
  const cells = panel.content.widgets.filter(c => c.model.type === 'code');
  return cells.every(c => c.model.executionCount !== null && c.promptNode
                          && !c.promptNode.textContent.includes('*'));
}
"""

# The notebook model's outputs, as nbformat JSON, per code cell.
JS_OUTPUTS = """
() => {
  const panel = window.jupyterapp.shell.currentWidget;
  return panel.content.widgets.filter(c => c.model.type === 'code')
    .map(c => ({index: panel.content.widgets.indexOf(c), count: c.model.executionCount,
                outputs: c.model.outputs.toJSON()}));
}
"""

# Stop the kernel and close the tab without the "save changes?" dialog (it is a temporary copy).
JS_CLOSE_CURRENT = """
async () => {
  const panel = window.jupyterapp.shell.currentWidget;
  if (!panel || !panel.context) return false;
  try { await panel.sessionContext.shutdown(); } catch (e) { /* already gone */ }
  panel.context.model.dirty = false;
  panel.dispose();
  return true;
}
"""

#: An explorer as a learner sees it: a widget box whose own children include an HTML summary and
#: the picture (an ipywidgets Image renders as a bare <img>).
EXPLORER_SELECTOR = ".jp-OutputArea-output .widget-vbox:has(> img):has(> .widget-html)"

JS_CURRENT_ID = "() => window.jupyterapp.shell.currentWidget.id"

# How many explorers the current notebook shows.
JS_EXPLORERS = f"""
() => window.jupyterapp.shell.currentWidget.node.querySelectorAll('{EXPLORER_SELECTOR}').length
"""

# What explorer ``index`` shows: a SHA-256 of its picture's PNG bytes (fetched from the blob: URL
# the image widget made), the <img> src, the text of its HTML children (title and summary), and its
# sliders' labels and readouts.
_EXPLORER_STATE = f"""
async function explorerState(index) {{
  const box = window.jupyterapp.shell.currentWidget.node
    .querySelectorAll('{EXPLORER_SELECTOR}')[index];
  const img = box.querySelector(':scope > img');
  const text = Array.from(box.querySelectorAll(':scope > .widget-html'))
    .map(h => h.innerText).join(' | ');
  let digest = '';
  if (img.src) {{
    const bytes = await (await fetch(img.src)).arrayBuffer();
    const hash = await crypto.subtle.digest('SHA-256', bytes);
    digest = Array.from(new Uint8Array(hash)).map(b => b.toString(16).padStart(2, '0')).join('');
  }}
  const sliders = Array.from(box.querySelectorAll('.widget-slider')).map(s => ({{
    label: (s.querySelector('.widget-label') || {{}}).textContent || '',
    readout: (s.querySelector('.widget-readout') || {{}}).textContent || '',
  }}));
  return {{src: img.src, png_sha256: digest, text, sliders}};
}}
"""

JS_EXPLORER_STATE = f"async (index) => {{ {_EXPLORER_STATE}; return await explorerState(index); }}"

# Explorer ``index`` now shows a picture other than the one whose hash is ``old``.
JS_EXPLORER_CHANGED = f"""async ([index, old]) => {{ {_EXPLORER_STATE};
  const state = await explorerState(index);
  return state.png_sha256 !== '' && state.png_sha256 !== old;
}}"""
