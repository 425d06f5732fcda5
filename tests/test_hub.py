"""The hub recipe, run: a real JupyterHub on 127.0.0.1, several learners, the course's nbgitpuller link.

What runs (one hub for the whole module, about a minute on 2 cores):

* JupyterHub with its ``SimpleLocalProcessSpawner`` (each user's server is a local process whose
  home is a temporary folder) and ``DummyAuthenticator``; the proxy is ``configurable-http-proxy``
  from npm (``.ci/run`` installs it where missing). Only 127.0.0.1 is used.
* The user servers get the files ``docs/hub/config.yaml`` mounts into the image (its
  ``singleuser.extraFiles``: the Jupyter server config with the kernel culling, JupyterLab's
  settings overrides) and its ``singleuser.extraEnv``, with ``/home/jovyan`` mapped to each
  user's temporary home. Nothing else is passed: in particular not this process's ``PYTHONPATH``,
  so ``import accelkit`` in a learner's kernel finds the library only through what the recipe sets
  up (the pulled checkout first on the path), and the test asserts where it came from.
* The course repository is a bare git clone of this working tree's files in a temporary folder
  (nbgitpuller clones from a local path; nothing leaves the machine).
* Each learner logs in through the hub's login form, opens the link exactly as
  ``docs/hub/README.md`` gives it (through ``/hub/user-redirect/`` and the hub's OAuth), then
  makes the request the nbgitpuller page makes (its event stream), and runs a lesson in their own
  kernel through the server's REST API and kernel websocket, as JupyterLab does.
* Then upstream changes ``accelkit/`` and a lesson together, and edits lines one learner also
  edited; a second click on the link merges as nbgitpuller promises (upstream's changes to lines
  the learner left alone arrive, the learner's own lines win, a file the learner deleted comes
  back fresh), and the updated lesson runs against the updated library in a new kernel.
* And the update with a lesson open (docs/hub/README.md, "Updates during a course"): a learner
  has lesson 00 open in JupyterLab in a real browser (headless Chromium, through the hub's login
  and proxy), its kernel running the old library, and a note of theirs saved in it; upstream
  changes the library and that lesson; the learner clicks the link (the pull merges) with the tab
  still open. The tab's next save raises JupyterLab's "File Changed" dialog; the procedure says
  Revert, which loads the merged notebook (upstream's change and the learner's note); the
  restarted kernel runs the updated library; the save after that writes a file that keeps both.

Skipped locally (never under ``CI``) when ``configurable-http-proxy`` or ``git`` is missing.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import parse_qsl, quote

import nbformat
import pytest
import yaml

# requests, websocket-client and jupyter_server come with the deploy extra (never skipped for want
# of them there). They are imported where they are used, so that the contributor's run, which
# collects this module only to deselect it, needs none of them.

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "docs" / "hub" / "config.yaml"
GUIDE = ROOT / "docs" / "hub" / "README.md"
USERS = {"ada": "lessons/00_start_here.ipynb", "grace": "lessons/02_gpu_simd.ipynb",
         "linus": "lessons/05_roofline.ipynb"}
PROBE_TEXT = "hub update reached the library"

pytestmark = pytest.mark.deploy


def _needed_tools() -> dict[str, str]:
    found = {name: shutil.which(name) for name in ("configurable-http-proxy", "git")}
    missing = [name for name, path in found.items() if not path]
    if missing:
        message = (f"{', '.join(missing)} not found: .ci/run installs configurable-http-proxy with "
                   "npm (npm install -g configurable-http-proxy)")
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    for module in ("jupyterhub", "nbgitpuller"):
        try:
            __import__(module)
        except ImportError:
            message = f"{module} is not installed: it is in pyproject.toml's deploy extra"
            if os.environ.get("CI"):
                pytest.fail(message)
            pytest.skip(message)
    return found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _git(*args: str, cwd: Path) -> str:
    done = subprocess.run(["git", "-c", "user.name=Course upstream", "-c", "user.email=upstream@example.org",
                           "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", *args],
                          cwd=cwd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


def _recipe() -> dict:
    return yaml.safe_load(CONFIG.read_text(encoding="utf-8"))


def _course_link(hub_url: str, repo: str) -> str:
    """The nbgitpuller link from the guide, with this test's hub and repository put in (the
    guide's link names the course's one address, docs/hub/links.py's; here it is a local clone)."""
    sys.path.insert(0, str(ROOT / "docs" / "hub"))
    import links

    text = GUIDE.read_text(encoding="utf-8")
    link = re.search(r"https://<your-hub>(/hub/user-redirect/git-pull\?[^\s`)]+)", text)
    assert link, "docs/hub/README.md gives no nbgitpuller link"
    address = f"repo={quote(links.repository(), safe='')}&"
    assert address in link.group(1), f"the guide's link does not name {links.repository()}"
    path = link.group(1).replace(address, f"repo={quote(repo, safe='')}&")
    assert "<" not in path, f"unfilled placeholder in the guide's link: {path}"
    return hub_url + path


class Hub:
    """A JupyterHub on 127.0.0.1 with the recipe's single-user settings."""

    def __init__(self, workdir: Path, proxy: str):
        self.workdir = workdir
        self.port, self.hub_port, self.api_port = _free_port(), _free_port(), _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.token = secrets.token_hex(16)
        self.homes = workdir / "home"
        recipe = _recipe()["singleuser"]

        # The recipe's mounted files, written where this test's servers read them.
        etc = workdir / "etc-jupyter"
        etc.mkdir()
        settings = workdir / "lab-settings"
        settings.mkdir()
        mounts = {spec["mountPath"]: spec["data"] for spec in recipe["extraFiles"].values()}
        server_config = dict(mounts["/etc/jupyter/jupyter_server_config.json"])
        self.server_config = server_config
        # Test-only change: the culler's clock shrinks from minutes to seconds, same settings.
        cull = dict(server_config["MappingKernelManager"])
        cull.update(cull_idle_timeout=4, cull_interval=1)
        overrides = mounts["/srv/conda/envs/notebook/share/jupyter/lab/settings/overrides.json"]
        (settings / "overrides.json").write_text(json.dumps(overrides), encoding="utf-8")
        # Test-only too: JupyterLab's application object on window.jupyterapp, so the open-tab
        # test drives a learner's tab through JupyterLab's own commands (tests/lab_harness.py).
        (etc / "jupyter_server_config.json").write_text(json.dumps(
            {**server_config, "MappingKernelManager": cull,
             "LabApp": {"app_settings_dir": str(settings), "expose_app_in_browser": True}}),
            encoding="utf-8")

        environment = {key: str(value) for key, value in recipe.get("extraEnv", {}).items()}
        environment.update(JUPYTER_CONFIG_PATH=str(etc), MPLBACKEND="Agg",
                           MPLCONFIGDIR=str(workdir / "mpl"), PYTHONDONTWRITEBYTECODE="1")
        self.environment = environment
        bin_dir = Path(sys.executable).parent
        config = workdir / "jupyterhub_config.py"
        config.write_text("\n".join([
            f"c.JupyterHub.ip = '127.0.0.1'",
            f"c.JupyterHub.port = {self.port}",
            f"c.JupyterHub.hub_ip = '127.0.0.1'",
            f"c.JupyterHub.hub_port = {self.hub_port}",
            f"c.ConfigurableHTTPProxy.api_url = 'http://127.0.0.1:{self.api_port}'",
            f"c.ConfigurableHTTPProxy.command = [{proxy!r}]",
            f"c.JupyterHub.db_url = 'sqlite:///{workdir / 'hub.sqlite'}'",
            f"c.JupyterHub.cookie_secret_file = {str(workdir / 'cookie_secret')!r}",
            f"c.JupyterHub.pid_file = {str(workdir / 'hub.pid')!r}",
            "c.JupyterHub.authenticator_class = 'dummy'",
            "c.Authenticator.allow_all = True",
            "c.JupyterHub.spawner_class = 'simple'",
            f"c.SimpleLocalProcessSpawner.home_dir_template = {str(self.homes) + '/{username}'!r}",
            f"c.Spawner.cmd = [{str(bin_dir / 'jupyterhub-singleuser')!r}]",
            # CI runs as root; a single-user server refuses root without this flag.
            f"c.Spawner.args = {['--allow-root'] if os.geteuid() == 0 else []!r}",
            f"c.Spawner.default_url = {recipe.get('defaultUrl', '/lab')!r}",
            # Only PATH and locale from this process: the recipe's environment does the rest.
            "c.Spawner.env_keep = ['PATH', 'LANG', 'LC_ALL']",
            # The recipe's /home/jovyan is each user's home, filled in by the spawner per user.
            "c.Spawner.environment = {%s}" % ", ".join(
                f"{key!r}: lambda spawner, v={value!r}: v.replace('/home/jovyan', spawner.home_dir)"
                for key, value in environment.items()),
            "c.Spawner.start_timeout = 90",
            # Answer a spawn request at once (202) instead of after 10 s, so servers start together.
            "c.JupyterHub.tornado_settings = {'slow_spawn_timeout': 0}",
            "c.Spawner.http_timeout = 90",
            "c.JupyterHub.services = [{'name': 'course-test', 'api_token': %r}]" % self.token,
            "c.JupyterHub.load_roles = [{'name': 'course-test', 'services': ['course-test'],"
            " 'scopes': ['admin:users', 'admin:servers', 'list:users']}]",
        ]) + "\n", encoding="utf-8")
        self.log = open(workdir / "hub.log", "w")
        # Warm matplotlib's font cache once, so three first imports do not each build it.
        subprocess.run([sys.executable, "-c", "import matplotlib.font_manager"], check=True,
                       env={**os.environ, "MPLCONFIGDIR": str(workdir / "mpl")}, timeout=120)
        self.process = subprocess.Popen(
            [str(bin_dir / "jupyterhub"), "-f", str(config)], cwd=workdir,
            stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True,
            env={key: value for key, value in os.environ.items()
                 if not key.startswith(("PYTHON", "JUPYTER", "VIRTUAL_ENV"))})
        import requests

        self._wait(lambda: requests.get(f"{self.url}/hub/api/", timeout=2).ok, 60, "the hub")

    def _wait(self, ready, seconds: float, what: str) -> None:
        import requests

        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"the hub exited:\n{self.logs()}")
            try:
                if ready():
                    return
            except (requests.RequestException, OSError):
                pass
            time.sleep(0.5)
        raise AssertionError(f"{what} was not ready in {seconds} s:\n{self.logs()}")

    def logs(self) -> str:
        self.log.flush()
        return (self.workdir / "hub.log").read_text(errors="replace")[-6000:]

    def api(self, method: str, path: str, **kwargs):
        import requests

        return requests.request(method, f"{self.url}/hub/api{path}", timeout=60,
                                headers={"Authorization": f"token {self.token}"}, **kwargs)

    def start_server(self, name: str) -> None:
        assert self.api("POST", "/users", json={"usernames": [name]}).status_code in (201, 409)
        assert self.api("POST", f"/users/{name}/server").status_code in (201, 202), self.logs()

    def wait_ready(self, name: str) -> None:
        self._wait(lambda: self.api("GET", f"/users/{name}").json()["servers"].get("", {})
                   .get("ready"), 120, f"{name}'s server")

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
        self.log.close()


class Learner:
    """One learner's browser session: cookies from the hub's login and their server's XSRF token."""

    def __init__(self, hub: Hub, name: str):
        import requests

        self.hub, self.name = hub, name
        self.session = requests.Session()
        self.base = f"{hub.url}/user/{name}"
        self.home = hub.homes / name
        login = self.session.get(f"{hub.url}/hub/login", timeout=30)
        xsrf = re.search(r'name="_xsrf" value="([^"]+)"', login.text)
        form = {"username": name, "password": "any"}
        if xsrf:
            form["_xsrf"] = xsrf.group(1)
        reply = self.session.post(f"{hub.url}/hub/login", data=form, timeout=30)
        assert reply.ok, reply.text[-2000:]

    def open_link(self, link: str) -> dict:
        """Open the link as a browser does, then make the request nbgitpuller's page makes."""
        page = self.session.get(link, timeout=60)
        assert page.ok and page.url.startswith(f"{self.base}/git-pull?"), (page.status_code, page.url)
        assert "nbgitpuller" in page.text.lower(), page.text[:2000]
        # The page's script opens an event stream at git-pull/api with the same query.
        query = page.url.split("?", 1)[1]
        events = []
        with self.session.get(f"{self.base}/git-pull/api?{query}", stream=True, timeout=120) as stream:
            assert stream.ok, stream.text
            for line in stream.iter_lines(decode_unicode=True):
                if line and line.startswith("data: "):
                    event = json.loads(line[len("data: "):])
                    events.append(event)
                    if event.get("phase") in ("finished", "error"):
                        break
        assert events and events[-1]["phase"] == "finished", events[-3:]
        arguments = dict(parse_qsl(query))
        return {"query": arguments, "urlpath": arguments.get("urlpath", "")}

    def _cookies(self) -> list:
        """The cookies a browser sends to this learner's server (the hub's own have path /hub/)."""
        mine = f"/user/{self.name}/"
        return [c for c in self.session.cookies if mine.startswith(c.path.rstrip("/") + "/")]

    def _xsrf(self) -> dict[str, str]:
        token = [c.value for c in self._cookies() if c.name == "_xsrf"]
        return {"X-XSRFToken": token[-1]} if token else {}

    def rest(self, method: str, path: str, **kwargs):
        return self.session.request(method, f"{self.base}/api{path}", timeout=60,
                                    headers=self._xsrf(), **kwargs)

    def lab_setting(self, plugin: str) -> dict:
        """A plugin's effective settings: the user's own, else the defaults (overrides applied)."""
        reply = self.session.get(f"{self.base}/lab/api/settings/{plugin}", timeout=60)
        assert reply.ok, reply.text
        answer = reply.json()
        defaults = {key: spec.get("default") for key, spec in answer["schema"]["properties"].items()}
        return {**defaults, **answer["settings"]}

    def start_kernel(self, cwd: str) -> str:
        reply = self.rest("POST", "/sessions", json={"path": f"{cwd}/probe-{uuid.uuid4().hex[:6]}.ipynb",
                                                      "type": "notebook", "name": "",
                                                      "kernel": {"name": "python3"}})
        assert reply.status_code == 201, reply.text
        return reply.json()["kernel"]["id"]

    def run_cells(self, kernel_id: str, sources: list[str], timeout: float = 180) -> list[str]:
        """Execute each source in the kernel over its websocket; return what each printed."""
        import websocket
        from jupyter_server.services.kernels.connection.base import deserialize_binary_message

        cookie = "; ".join(f"{c.name}={c.value}" for c in self._cookies())
        url = self.base.replace("http://", "ws://") + f"/api/kernels/{kernel_id}/channels"
        ws = websocket.create_connection(url, header=[f"Cookie: {cookie}", *(
            f"{k}: {v}" for k, v in self._xsrf().items())], timeout=timeout,
            origin=self.hub.url)
        session, texts = uuid.uuid4().hex, []
        try:
            for source in sources:
                msg_id = uuid.uuid4().hex
                ws.send(json.dumps({
                    "header": {"msg_id": msg_id, "msg_type": "execute_request", "session": session,
                               "username": self.name, "version": "5.3", "date": ""},
                    "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
                    "content": {"code": source, "silent": False, "store_history": True,
                                "user_expressions": {}, "allow_stdin": False, "stop_on_error": True}}))
                printed, reply, idle = [], None, False
                while reply is None or not idle:
                    opcode, data = ws.recv_data()
                    # Messages carrying binary buffers (widget state) arrive as binary frames.
                    message = (deserialize_binary_message(data) if opcode == websocket.ABNF.OPCODE_BINARY
                               else json.loads(data))
                    if message.get("parent_header", {}).get("msg_id") != msg_id:
                        continue
                    kind, content = message["header"]["msg_type"], message["content"]
                    if kind == "stream":
                        printed.append(content["text"])
                    elif kind in ("execute_result", "display_data"):
                        printed.append(content.get("data", {}).get("text/plain", ""))
                    elif kind == "error":
                        raise AssertionError(f"{self.name}'s kernel: {content['ename']}: "
                                             f"{content['evalue']}\nin cell:\n{source[:800]}")
                    elif kind == "status" and content["execution_state"] == "idle":
                        idle = True
                    elif kind == "execute_reply":
                        reply = content
                assert reply["status"] == "ok", reply
                texts.append("".join(printed))
        finally:
            ws.close()
        return texts

    def run_notebook(self, path: str) -> list[str]:
        """Run every code cell of the notebook at ``path`` (relative to home), in a fresh kernel."""
        reply = self.rest("GET", f"/contents/{quote(path)}", params={"content": "1"})
        assert reply.ok, reply.text
        notebook = nbformat.from_dict(reply.json()["content"])
        kernel = self.start_kernel(str(Path(path).parent))
        cells = [c.source for c in notebook.cells if c.cell_type == "code"]
        where = "import accelkit, os; print(os.path.realpath(accelkit.__file__))"
        texts = self.run_cells(kernel, [where, *cells])
        library = Path(texts[0].strip())
        checkout = Path(self.hub.environment["PYTHONPATH"].replace("/home/jovyan", str(self.home)))
        assert library.is_relative_to(checkout.resolve()), (
            f"{self.name}'s kernel imported accelkit from {library}, not the pulled checkout {checkout}")
        self.rest("DELETE", f"/kernels/{kernel}")
        return texts[1:]


@pytest.fixture(scope="module")
def course_repo(tmp_path_factory):
    """A bare repository holding this working tree's files, and a clone upstream commits in."""
    base = tmp_path_factory.mktemp("course")
    upstream = base / "upstream"
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        if (ROOT / name).is_file():
            (upstream / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, upstream / name)
    _git("init", "-q", cwd=upstream)
    _git("add", "-A", cwd=upstream)
    _git("commit", "-q", "-m", "course as the workshop starts", cwd=upstream)
    bare = base / "accelkit.git"
    _git("clone", "-q", "--bare", str(upstream), str(bare), cwd=base)
    _git("remote", "add", "hub", str(bare), cwd=upstream)
    return {"upstream": upstream, "bare": bare}


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    tools = _needed_tools()
    running = Hub(tmp_path_factory.mktemp("hub"), tools["configurable-http-proxy"])
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="module")
def learners(hub, course_repo):
    """Every learner logged in, with a running server, after opening the course link once."""
    for name in USERS:
        hub.start_server(name)
    for name in USERS:
        hub.wait_ready(name)
    link = _course_link(hub.url, str(course_repo["bare"]))
    people = {name: Learner(hub, name) for name in USERS}
    for learner in people.values():
        learner.opened = learner.open_link(link)
    return people, link


def test_recipe_settings_reach_each_server(learners):
    people, _ = learners
    for learner in people.values():
        assert learner.lab_setting("@jupyterlab/notebook-extension:tracker")["kernelShutdown"] is True
        news = learner.lab_setting("@jupyterlab/apputils-extension:notification")
        assert news["fetchNews"] == "false" and news["checkForUpdates"] is False


def test_each_learner_gets_the_notebooks_and_runs_a_lesson_in_their_own_kernel(learners):
    people, _ = learners
    target = next(iter(people.values())).opened["query"]["targetpath"]
    def works(name: str) -> None:
        learner, lesson = people[name], USERS[name]
        # The link lands on lesson 00 in the checkout, and every lesson and exercise is there.
        assert learner.opened["urlpath"].startswith(f"lab/tree/{target}/lessons/"), learner.opened
        listing = learner.rest("GET", f"/contents/{target}/lessons").json()["content"]
        names = sorted(item["name"] for item in listing if item["name"].endswith(".ipynb"))
        assert names == sorted(p.name for p in (ROOT / "lessons").glob("*.ipynb")), names
        assert (learner.home / target / "exercises").is_dir()
        texts = learner.run_notebook(f"{target}/{lesson}")
        assert any(text.strip() for text in texts), f"{lesson} printed nothing for {name}"

    # The learners work at the same time, each in their own server and kernel.
    with ThreadPoolExecutor(len(USERS)) as pool:
        for done in [pool.submit(works, name) for name in USERS]:
            done.result()
    kernels = {name: {k["id"] for k in people[name].rest("GET", "/kernels").json()} for name in USERS}
    assert all(not ids for ids in kernels.values()), kernels  # each run shut its kernel down


def test_a_kernel_whose_tab_closed_is_culled(learners):
    people, _ = learners
    learner = people["grace"]
    kernel = learner.start_kernel(".")  # started and never connected to: as after a closed tab
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if kernel not in {k["id"] for k in learner.rest("GET", "/kernels").json()}:
            return
        time.sleep(1)
    raise AssertionError("the recipe's MappingKernelManager culling did not shut an unconnected kernel down")


def _edit_cells(notebook: dict, edits) -> dict:
    notebook = json.loads(json.dumps(notebook))
    edits(notebook["cells"])
    return notebook


def test_upstream_change_to_library_and_lesson_merges_and_runs(learners, course_repo):
    people, link = learners
    ada, grace = people["ada"], people["grace"]
    target = ada.opened["query"]["targetpath"]
    lesson = f"{target}/lessons/00_start_here.ipynb"
    upstream = course_repo["upstream"]

    # Ada works in lesson 00: runs it, so her saved copy has outputs, retitles it, adds a note.
    mine = ada.rest("GET", f"/contents/{lesson}", params={"content": "1"}).json()["content"]
    first_code = next(i for i, c in enumerate(mine["cells"]) if c["cell_type"] == "code")

    def ada_edits(cells):
        cells[0]["source"] = "# 00 · Start here (Ada's notes)\n" + "".join(cells[0]["source"]).split("\n", 1)[1]
        cells[first_code]["execution_count"] = 1
        cells[first_code]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "ada ran this\n"}]
        cells.append({"cell_type": "markdown", "id": "ada-note", "metadata": {},
                      "source": "My note: the array wastes cycles filling and draining."})

    saved = ada.rest("PUT", f"/contents/{lesson}", json={
        "type": "notebook", "format": "json", "content": _edit_cells(mine, ada_edits)})
    assert saved.ok, saved.text
    # Grace deletes her copy of lesson 03: clicking the link again is how she starts it over.
    assert grace.rest("DELETE", f"/contents/{target}/lessons/03_tpu_systolic.ipynb").status_code == 204

    # Upstream: a new library function, and lesson 00 calling it in its first code cell; the
    # lesson's title line changes too (the line Ada also changed).
    init = upstream / "accelkit" / "__init__.py"
    init.write_text(init.read_text(encoding="utf-8") + f"\n\ndef _hub_update_probe():\n"
                    f"    return {PROBE_TEXT!r}\n", encoding="utf-8")
    path = upstream / "lessons" / "00_start_here.ipynb"
    notebook = nbformat.read(path, as_version=4)
    title = notebook.cells[0].source.split("\n", 1)
    notebook.cells[0].source = "# 00 · Start here, updated\n" + title[1]
    code = notebook.cells[first_code]
    code.source = code.source + "\nprint(ak._hub_update_probe())"
    nbformat.write(notebook, path)
    _git("commit", "-q", "-am", "lesson 00 uses a new library function", cwd=upstream)
    _git("push", "-q", "hub", "HEAD:main", cwd=upstream)
    upstream_first_code = code.source

    for learner in (ada, grace):
        assert learner.open_link(link)["query"]["targetpath"] == target

    merged = nbformat.reads((ada.home / lesson).read_text(encoding="utf-8"), as_version=4)
    nbformat.validate(merged)  # the line-level merge left valid notebook JSON
    # Lines only upstream changed arrive; the line both changed keeps Ada's side (-Xours); her
    # new cell stays; her saved output now sits under a cell whose source changed: stale.
    assert merged.cells[first_code].source == upstream_first_code
    assert merged.cells[0].source.startswith("# 00 · Start here (Ada's notes)\n")
    assert merged.cells[-1].source.startswith("My note:")
    assert [o.get("text") for o in merged.cells[first_code].outputs] == ["ada ran this\n"]
    # Grace never edited lesson 00: hers is upstream's file, byte for byte; her deleted lesson 03
    # is back as upstream has it.
    assert (grace.home / lesson).read_bytes() == path.read_bytes()
    assert ((grace.home / target / "lessons" / "03_tpu_systolic.ipynb").read_bytes()
            == (upstream / "lessons" / "03_tpu_systolic.ipynb").read_bytes())

    # The updated lesson runs, top to bottom, against the updated library, in a new kernel.
    for learner in (ada, grace):
        texts = learner.run_notebook(lesson)
        assert texts[0].rstrip().endswith(PROBE_TEXT), texts[:2]  # the first code cell's output


# nativeauthenticator 1.3.0 calls locale.getdefaultlocale() when imported (deprecated in Python
# 3.11, its own code, not ours).
@pytest.mark.filterwarnings("ignore:'locale.getdefaultlocale' is deprecated:DeprecationWarning")
def test_the_recipes_sign_in_settings_are_the_native_authenticators():
    """The hub in this test signs in with the dummy authenticator; the recipe's real one is the
    native authenticator (chart's hub image): its name must resolve to it, and every setting the
    recipe gives it must be one of its configurable traits (a misspelt one would be ignored)."""
    from importlib.metadata import entry_points

    hub_config = _recipe()["hub"]["config"]
    name = hub_config["JupyterHub"]["authenticator_class"]
    found = [e for e in entry_points(group="jupyterhub.authenticators") if e.name == name]
    assert found, f"no authenticator is registered as {name!r}"
    authenticator = found[0].load()
    assert authenticator.__name__ == "NativeAuthenticator", authenticator
    traits = authenticator.class_trait_names(config=True)
    for section in ("NativeAuthenticator", "Authenticator"):
        unknown = set(hub_config[section]) - set(traits)
        assert not unknown, f"{section} settings that are not traits of {authenticator.__name__}: {unknown}"
    assert hub_config["NativeAuthenticator"]["open_signup"] is False  # an admin approves each account


# -- an update while a learner has the lesson open -----------------------------------------------

OPEN_TAB_PROBE = "the open tab's update reached the kernel"

# The "File Changed" dialog JupyterLab raises when a save finds the file changed on disk.
JS_FILE_CHANGED = """
() => Array.from(document.querySelectorAll('.jp-Dialog')).some(d =>
  (d.querySelector('.jp-Dialog-header') || {}).textContent === 'File Changed')
"""

JS_DIALOG_BUTTONS = """
() => Array.from(document.querySelectorAll('.jp-Dialog .jp-Dialog-button'))
        .map(b => b.textContent.trim()).filter(Boolean)
"""

# Start a save of the current notebook as autosave would, without waiting for it (the save
# waits on the dialog); the page keeps the promise.
JS_START_SAVE = """
() => { window.__save = window.jupyterapp.commands.execute('docmanager:save'); return true; }
"""

JS_CELL_SOURCES = """
() => window.jupyterapp.shell.currentWidget.content.widgets.map(c => c.model.sharedModel.getSource())
"""

JS_RESTART_RUN_ALL = """
async () => {
  const panel = window.jupyterapp.shell.currentWidget;
  await panel.sessionContext.restartKernel();
  await window.jupyterapp.commands.execute('notebook:run-all-cells');
  return true;
}
"""

JS_MARK_DIRTY = """
() => { window.jupyterapp.shell.currentWidget.content.model.dirty = true; return true; }
"""


def _browser_login(page, hub: Hub, name: str) -> None:
    page.goto(f"{hub.url}/hub/login")
    page.fill("input[name=username]", name)
    page.fill("input[name=password]", "any")
    page.click("input[type=submit], button[type=submit]")
    page.wait_for_url(f"{hub.url}/**", timeout=60_000)


def test_an_update_while_the_lesson_is_open_loses_nothing(hub, course_repo, learners):
    from playwright.sync_api import sync_playwright

    from tests import lab_harness as lab

    if not lab.CHROMIUM.exists():
        message = f"{lab.CHROMIUM} is not installed (.ci/run installs Debian's chromium)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    _, link = learners
    name = "hopper"
    hub.start_server(name)
    hub.wait_ready(name)
    hopper = Learner(hub, name)
    target = hopper.open_link(link)["query"]["targetpath"]
    lesson = f"{target}/lessons/00_start_here.ipynb"
    upstream = course_repo["upstream"]

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(lab.CHROMIUM), args=lab.CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            _browser_login(page, hub, name)
            page.goto(f"{hub.url}/user/{name}/lab/tree/{lesson}")
            page.wait_for_function(lab.JS_APP_STARTED, timeout=120_000, polling=250)
            page.wait_for_function(lab.JS_NOTEBOOK_READY, arg=lesson, timeout=120_000, polling=250)
            # The learner runs the lesson (the kernel now holds the old library), adds a note
            # at the end, and saves: step 1 of the procedure.
            page.evaluate(lab.JS_RUN_ALL)
            page.wait_for_function(lab.JS_ALL_DONE, timeout=240_000, polling=250)
            page.evaluate("""async () => {
              const notebook = window.jupyterapp.shell.currentWidget.content;
              notebook.activeCellIndex = notebook.widgets.length - 1;
              await window.jupyterapp.commands.execute('notebook:insert-cell-below');
              await window.jupyterapp.commands.execute('notebook:change-cell-to-markdown');
              notebook.activeCell.model.sharedModel.setSource("Hopper's note: fill and drain cost cycles.");
              await window.jupyterapp.commands.execute('docmanager:save');
              return true;
            }""")
            saved = (hopper.home / lesson).read_text(encoding="utf-8")
            assert "Hopper's note" in saved

            # Upstream changes the library and the lesson's first code cell, and publishes.
            init = upstream / "accelkit" / "__init__.py"
            init.write_text(init.read_text(encoding="utf-8") + f"\n\ndef _open_tab_probe():\n"
                            f"    return {OPEN_TAB_PROBE!r}\n", encoding="utf-8")
            path = upstream / "lessons" / "00_start_here.ipynb"
            notebook = nbformat.read(path, as_version=4)
            first_code = next(i for i, c in enumerate(notebook.cells) if c.cell_type == "code")
            notebook.cells[first_code].source += "\nprint(ak._open_tab_probe())"
            nbformat.write(notebook, path)
            _git("commit", "-q", "-am", "lesson 00 prints the open-tab probe", cwd=upstream)
            _git("push", "-q", "hub", "HEAD:main", cwd=upstream)

            # The learner clicks the link with the tab still open: the pull merges on disk.
            hopper.open_link(link)
            merged = nbformat.reads((hopper.home / lesson).read_text(encoding="utf-8"), as_version=4)
            assert "_open_tab_probe" in merged.cells[first_code].source
            assert merged.cells[-1].source.startswith("Hopper's note")
            # The tab still shows the old notebook; the next save (autosave's, here started at
            # once) meets the changed file and asks.
            assert "_open_tab_probe" not in "".join(page.evaluate(JS_CELL_SOURCES))
            page.evaluate(JS_MARK_DIRTY)
            page.evaluate(JS_START_SAVE)
            page.wait_for_function(JS_FILE_CHANGED, timeout=60_000, polling=200)
            buttons = page.evaluate(JS_DIALOG_BUTTONS)
            assert "Revert" in buttons and "Overwrite" in buttons, buttons
            # The procedure: Revert (never Overwrite, which would write the old tab over the merge).
            page.click(".jp-Dialog .jp-Dialog-button:has-text('Revert')")
            page.wait_for_function(
                "() => window.jupyterapp.shell.currentWidget.content.widgets"
                ".some(c => c.model.sharedModel.getSource().includes('_open_tab_probe'))",
                timeout=60_000, polling=200)
            sources = page.evaluate(JS_CELL_SOURCES)
            assert sources[-1].startswith("Hopper's note"), sources[-1:]
            # Then Kernel -> Restart Kernel and Run All Cells: the new kernel imports the update.
            page.evaluate(JS_RESTART_RUN_ALL)
            page.wait_for_function(lab.JS_ALL_DONE, timeout=240_000, polling=250)
            outputs = page.evaluate(lab.JS_OUTPUTS)
            first = next(o for o in outputs if o["index"] == first_code)
            printed = "".join(str(out.get("text", "")) for out in first["outputs"])
            assert OPEN_TAB_PROBE in printed, first
            page.evaluate("async () => { await window.jupyterapp.commands.execute('docmanager:save'); return true; }")
            assert not page.evaluate(JS_FILE_CHANGED), "a second File Changed dialog after the revert"
        finally:
            browser.close()
    # On disk: upstream's change, the learner's note, and the output of the updated library.
    final = nbformat.reads((hopper.home / lesson).read_text(encoding="utf-8"), as_version=4)
    assert "_open_tab_probe" in final.cells[first_code].source
    assert final.cells[-1].source.startswith("Hopper's note")
    assert OPEN_TAB_PROBE in "".join(o.get("text", "") for o in final.cells[first_code].outputs)
