"""The course in a browser tab: a JupyterLite site with the Pyodide kernel, built offline.

``python publish/build.py --only lite`` writes ``build/course/lite/``: a static site (serve it
from any web server, or GitHub Pages) whose JupyterLab runs Python in the browser with Pyodide,
with the lessons, the exercises and the glossary in its file browser. No server runs code and
there is no Binder queue.

What the build puts together, and where each piece comes from:

* JupyterLite itself and its Pyodide kernel: the ``jupyterlite-core`` and
  ``jupyterlite-pyodide-kernel`` packages (PyPI). Only two front-end extensions are copied in (the
  Pyodide kernel's and ipywidgets' JupyterLab manager), not every extension this environment has.
* Pyodide's core (the interpreter, its standard library): npm's ``pyodide`` package, the version
  the kernel expects (publish/package.json), served from the site's ``static/pyodide/``.
* The pure-Python packages the kernel needs to start (micropip, IPython and its dependencies,
  jedi) and the course's own (accelkit's wheel, built here; ipywidgets, comm and
  jupyterlab_widgets): wheels from PyPI, at the versions Pyodide's lock file names, served from
  the site with the lock file rewritten to their checksums, so that they load with no network.
* Compiled packages (numpy, matplotlib and theirs): Pyodide builds them for WebAssembly and
  publishes them only on its CDN, not on PyPI or npm. The lock file points at the CDN for those,
  so a learner who is online gets them the first time a lesson imports accelkit; a machine with
  no internet (this one, CI) cannot, and there the lessons' first ``import`` of numpy fails.
  tests/test_lite.py checks what can be checked offline: the site builds, the kernel starts in
  headless Chromium, ``import accelkit`` and ``import ipywidgets`` work, and numpy's failure says
  what failed.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from publish import node_tools  # noqa: E402

#: Pyodide's CDN for the packages only it publishes (its lock's version, see pyodide_version).
CDN = "https://cdn.jsdelivr.net/pyodide/v{version}/full/"
#: What the kernel installs when it starts (jupyterlite-pyodide-kernel's worker: micropip, then
#: ipykernel, comm, pyodide-kernel, jedi and ipython through piplite), with their dependencies
#: from the lock file; and the course's own pure-Python packages.
KERNEL_PACKAGES = ("micropip", "ipython", "jedi")
COURSE_WHEELS = ("ipywidgets", "comm", "jupyterlab_widgets")
#: The compiled packages the lessons import (through accelkit), published only on Pyodide's CDN.
COMPILED = ("numpy", "matplotlib")
CORE_FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide.js",
              "package.json")


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _closure(lock: dict, names) -> list[str]:
    found: list[str] = []

    def walk(name: str) -> None:
        key = name.lower().replace("_", "-")
        if key in found or key not in lock:
            return
        found.append(key)
        for dep in lock[key].get("depends", []):
            walk(dep)

    for name in names:
        walk(name)
    return found


def _pip(*args: str) -> None:
    done = subprocess.run([sys.executable, "-m", "pip", *args], capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"pip {' '.join(args[:3])} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")


def pyodide_dir(static: Path, wheels: Path) -> dict:
    """Pyodide's core, the local wheels and a lock file that says where each package is."""
    source = node_tools.pyodide()
    static.mkdir(parents=True)
    for name in CORE_FILES:
        shutil.copy(source / name, static / name)
    lock = json.loads((source / "pyodide-lock.json").read_text(encoding="utf-8"))
    packages = lock["packages"]
    cdn = CDN.format(version=json.loads((source / "package.json").read_text())["version"])
    # The kernel's own packages, and the pure-Python dependencies of the compiled ones the
    # lessons need (matplotlib's cycler, fonttools, pyparsing...): PyPI has those too.
    local = _closure(packages, KERNEL_PACKAGES) + [
        key for key in _closure(packages, COMPILED)
        if packages[key]["file_name"].endswith("-none-any.whl") and key not in _closure(packages, KERNEL_PACKAGES)]
    specs = [f"{packages[k]['name']}=={packages[k]['version']}" for k in local]
    _pip("download", "--quiet", "--no-deps", "--only-binary=:all:", "--python-version", "3.14",
         "--platform", "any", "-d", str(wheels / "kernel"), *specs)
    by_name = {}
    for wheel in (wheels / "kernel").glob("*.whl"):
        by_name[wheel.name.split("-")[0].lower().replace("_", "-")] = wheel
    for key in local:
        wheel = by_name[key]
        shutil.copy(wheel, static / wheel.name)
        packages[key].update(file_name=wheel.name, sha256=_sha256(wheel))
    # The course's own packages, added to the lock so that `import accelkit` in a lesson loads
    # them (and numpy and matplotlib, from the CDN) without a pip command in the notebook.
    course = [f"{name}=={metadata.version(name)}" for name in COURSE_WHEELS]
    _pip("download", "--quiet", "--no-deps", "--only-binary=:all:", "-d", str(wheels / "course"), *course)
    _pip("wheel", "--quiet", "--no-deps", "-w", str(wheels / "course"), str(ROOT))
    depends = {"ipywidgets": ["comm", "ipython", "traitlets", "jupyterlab-widgets", "widgetsnbextension"],
               "comm": ["traitlets"], "jupyterlab-widgets": [],
               "accelkit": ["numpy", "matplotlib", "ipywidgets"]}
    imports = {"ipywidgets": ["ipywidgets"], "comm": ["comm"], "jupyterlab-widgets": ["jupyterlab_widgets"],
               "accelkit": ["accelkit"]}
    for wheel in (wheels / "course").glob("*.whl"):
        name, version = wheel.name.split("-")[:2]
        key = name.lower().replace("_", "-")
        shutil.copy(wheel, static / wheel.name)
        packages[key] = {"name": key, "version": version, "file_name": wheel.name, "install_dir": "site",
                         "sha256": _sha256(wheel), "package_type": "package", "imports": imports[key],
                         "depends": depends[key], "unvendored_tests": False}
    for key, entry in packages.items():
        if key not in local and not entry["file_name"].startswith(("http://", "https://")) \
                and not (static / entry["file_name"]).exists():
            entry["file_name"] = cdn + entry["file_name"]
    (static / "pyodide-lock.json").write_text(json.dumps(lock), encoding="utf-8")
    return {"local": sorted(local) + sorted(imports), "cdn": sorted(k for k, e in packages.items()
                                                                   if e["file_name"].startswith("https://"))}


def _extension(name: str) -> Path:
    for base in (Path(sys.prefix) / "share" / "jupyter" / "labextensions",):
        path = base / name
        if (path / "package.json").exists():
            return path
    raise FileNotFoundError(f"the JupyterLab extension {name} is not installed (pyproject.toml's deploy extra)")


def build(out: Path, work: Path) -> dict:
    for folder in (out, work):
        if folder.exists():
            shutil.rmtree(folder)
    work.mkdir(parents=True)
    static = work / "static" / "pyodide"
    packages = pyodide_dir(static, work / "wheels")
    kernel_extension = _extension("@jupyterlite/pyodide-kernel-extension")
    # ipywidgets 8's widgetsnbextension is a stand-in in the kernel's own index (pypi/ in its
    # extension); the lock points at that file, which the site serves under the extension.
    shims = sorted((kernel_extension / "static" / "pypi").glob("widgetsnbextension-4*.whl"))
    lock = json.loads((static / "pyodide-lock.json").read_text(encoding="utf-8"))
    shutil.copy(shims[-1], static / shims[-1].name)
    lock["packages"]["widgetsnbextension"] = {
        "name": "widgetsnbextension", "version": shims[-1].name.split("-")[1], "file_name": shims[-1].name,
        "install_dir": "site", "sha256": _sha256(shims[-1]), "package_type": "package",
        "imports": ["widgetsnbextension"], "depends": [], "unvendored_tests": False}
    (static / "pyodide-lock.json").write_text(json.dumps(lock), encoding="utf-8")
    files = work / "files"
    shutil.copytree(ROOT / "lessons", files / "lessons", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    shutil.copytree(ROOT / "exercises", files / "exercises", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    (files / "docs").mkdir()
    shutil.copy(ROOT / "docs" / "glossary.md", files / "docs" / "glossary.md")
    (work / "jupyter-lite.json").write_text(json.dumps({
        "jupyter-lite-schema-version": 0,
        "jupyter-config-data": {
            "appName": "accelkit", "exposeAppInBrowser": True,
            "litePluginSettings": {"@jupyterlite/pyodide-kernel-extension:kernel": {
                # Nothing from PyPI at run time: every package is in the lock file.
                "disablePyPIFallback": True}}}}), encoding="utf-8")
    command = [sys.executable, "-m", "jupyterlite_core", "build", "--lite-dir", str(work),
               "--output-dir", str(out), "--contents", str(files), "--ignore-sys-prefix", "--no-sourcemaps",
               f"--LiteBuildConfig.federated_extensions={kernel_extension}",
               f"--LiteBuildConfig.federated_extensions={_extension('@jupyter-widgets/jupyterlab-manager')}"]
    done = subprocess.run(command, cwd=work, capture_output=True, text=True, timeout=900)
    (work / "build.log").write_text(done.stdout + done.stderr, encoding="utf-8")
    if done.returncode != 0:
        raise RuntimeError(f"jupyter lite build failed:\n{(done.stdout + done.stderr)[-5000:]}")
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    report = {**packages, "bytes": size, "files": sum(1 for p in out.rglob("*") if p.is_file())}
    (out / "accelkit-build.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
    return report
