"""The course in a browser tab: the JupyterLite build, its Pyodide kernel started in headless Chromium.

``publish/build.py`` (conftest's ``course_build``) builds the site offline: Pyodide's core from
npm, the kernel's and the course's pure-Python wheels from PyPI (publish/lite.py). Tested here,
offline: the site holds the lessons and exercises; served from 127.0.0.1, its JupyterLab starts a
Pyodide kernel in Chromium; ``import accelkit`` and ``import ipywidgets`` work there. What cannot
be tested here: numpy and matplotlib, which Pyodide publishes only on its CDN (no machine of this
project reaches it), so the lessons' widgets cannot run offline; the test checks that importing
numpy fails because that fetch failed, and records how long the kernel took to start.
"""

from __future__ import annotations

import functools
import http.server
import json
import threading
import time

import pytest

from tests.conftest import built_step
from tests.notebook_runner import EXERCISES, LESSONS

pytestmark = pytest.mark.deploy

# Start a Pyodide kernel through JupyterLite's own service manager (the page exposes its app
# object: jupyter-lite.json's exposeAppInBrowser), run each code, return what each printed.
JS_RUN = """
async (codes) => {
  const app = window.jupyterapp;
  await app.serviceManager.ready;
  await app.restored;
  for (let i = 0; i < 300; i++) {
    await app.serviceManager.kernelspecs.refreshSpecs();
    const specs = app.serviceManager.kernelspecs.specs;
    if (specs && specs.kernelspecs && specs.kernelspecs.python) break;
    await new Promise(r => setTimeout(r, 100));
  }
  const started = performance.now();
  const kernel = await app.serviceManager.kernels.startNew({name: 'python'});
  const results = [];
  for (const code of codes) {
    const printed = [];
    const future = kernel.requestExecute({code});
    future.onIOPub = (msg) => {
      const c = msg.content;
      if (c.text) printed.push(c.text);
      if (c.data && c.data['text/plain']) printed.push(c.data['text/plain']);
      if (c.ename) printed.push('ERROR ' + c.ename + ': ' + c.evalue);
    };
    const reply = await future.done;
    results.push({status: reply.content.status, printed: printed.join(''),
                  seconds: (performance.now() - started) / 1000});
  }
  await kernel.shutdown();
  return results;
}
"""


class _Static(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, ".mjs": "text/javascript",
                      ".js": "text/javascript", ".wasm": "application/wasm", ".json": "application/json"}

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def site(course_build):
    out, step = built_step(course_build, "lite")
    folder = out / "lite"
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Static, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield folder, f"http://127.0.0.1:{server.server_address[1]}", step["result"]
    finally:
        server.shutdown()
        server.server_close()


def test_the_site_holds_the_course_and_a_local_pyodide(site):
    folder, _, report = site
    for path in LESSONS + EXERCISES:
        assert (folder / "files" / path.parent.name / path.name).is_file(), path
    config = json.loads((folder / "jupyter-lite.json").read_text(encoding="utf-8"))
    text = json.dumps(config)
    assert "pyodide-kernel-extension" in text and "./static/pyodide/pyodide.mjs" in text
    lock = json.loads((folder / "static" / "pyodide" / "pyodide-lock.json").read_text(encoding="utf-8"))
    for name in ("accelkit", "ipywidgets", "ipython", "micropip"):
        entry = lock["packages"][name]
        assert (folder / "static" / "pyodide" / entry["file_name"]).is_file(), name
    # What only Pyodide's CDN has, the lock says so (a learner online gets it there).
    assert lock["packages"]["numpy"]["file_name"].startswith("https://cdn.jsdelivr.net/pyodide/")
    print(f"JupyterLite site: {report['files']} files, {report['bytes'] / 1e6:.1f} MB; served locally: "
          f"{', '.join(report['local'])}; from Pyodide's CDN only: {len(report['cdn'])} packages")


def test_the_kernel_starts_in_chromium_and_imports_accelkit_and_ipywidgets(site):
    from playwright.sync_api import sync_playwright

    from tests.lab_harness import CHROMIUM, CHROMIUM_ARGS

    _, url, _ = site
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page()
        failed = []
        page.on("requestfailed", lambda request: failed.append(request.url))
        started = time.monotonic()
        page.goto(f"{url}/lab/index.html?path=lessons/00_start_here.ipynb")
        page.wait_for_function("() => !!window.jupyterapp", timeout=120_000)
        loaded = time.monotonic() - started
        results = page.evaluate(JS_RUN, [
            "import sys; print(sys.platform, sys.version.split()[0])",
            "import ipywidgets; print('ipywidgets', ipywidgets.__version__)",
            "import accelkit; print('accelkit', accelkit.__version__, accelkit.__file__)",
            "import numpy",
        ])
        browser.close()
    platform, widgets, library, numpy = results
    assert platform["status"] == "ok" and platform["printed"].startswith("emscripten"), platform
    assert widgets["status"] == "ok" and "ipywidgets 8." in widgets["printed"], widgets
    assert library["status"] == "ok" and "/site-packages/accelkit/" in library["printed"], library
    # Offline, numpy cannot come from Pyodide's CDN: the import fails because that fetch did.
    assert numpy["status"] == "error" and "numpy" in numpy["printed"], numpy
    assert any("cdn.jsdelivr.net/pyodide/" in u and "numpy" in u for u in failed), failed[:5]
    assert not [u for u in failed if u.startswith(url)], "the site itself is missing files"
    print(f"JupyterLite: page up in {loaded:.1f} s; Pyodide kernel ready and first cell run "
          f"{platform['seconds']:.1f} s after the request; accelkit imported by {library['seconds']:.1f} s")


def test_the_npm_pyodide_is_the_version_the_kernel_expects():
    import re
    import sys
    from pathlib import Path

    extension = Path(sys.prefix) / "share" / "jupyter" / "labextensions" / "@jupyterlite" / "pyodide-kernel-extension"
    expected = set()
    for script in (extension / "static").glob("*.js"):
        expected |= set(re.findall(r"cdn\.jsdelivr\.net/pyodide/v(\d+\.\d+\.\d+)/", script.read_text(errors="replace")))
    pinned = json.loads((Path(__file__).resolve().parents[1] / "publish" / "package.json").read_text())
    assert expected == {pinned["dependencies"]["pyodide"]}, (expected, pinned["dependencies"])
