"""Render the template into temporary folders with copier's Python API."""

import contextlib
import fcntl
import glob
import itertools
import json
import os
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from copier import run_copy
from uv import find_uv_bin

TEMPLATE = Path(__file__).resolve().parent.parent

sys.path.insert(0, str(TEMPLATE / ".ci"))
import release_tags  # noqa: E402  (the script the Release workflow tags releases with)

# This working tree's release, and every release before it, by its commit.
CURRENT = yaml.safe_load((TEMPLATE / "copier.yml").read_text())["template_version"]["default"]
RELEASES = {
    version: commit
    for version, commit in release_tags.releases(str(TEMPLATE)).items()
    if version != CURRENT
}

# The uv of the suite's own environment, by its real path: a version
# manager's shim named `uv` may pick its interpreter from a generated
# project's .python-version and fail there.
UV = find_uv_bin()

# The answers that add the most code: history, a provider extra, MCP servers,
# memory and a CodeZip deploy (tests/test_compatibility.py, tests/test_docs.py).
RICHEST = {
    "agent_manages_history": True,
    "model_provider": "anthropic",
    "include_mcp": True,
    "memory": "agentcore",
    "deploy_build": "CodeZip",
    "include_github_sample": True,
}

TOGGLES = (
    "include_sample_tools",
    "include_image_generation",
    "gate_unlisted_tools",
    "agent_manages_history",
    "include_github_sample",
)
# Six of the thirty-two combinations hold every pair of two toggles' values
# (a covering array of strength 2); the quick loop renders those, and the
# whole suite every combination.
EVERY_PAIR = {
    (False, False, False, False, True),
    (False, False, False, True, False),
    (False, True, True, True, True),
    (True, False, True, True, True),
    (True, True, False, True, True),
    (True, True, True, False, False),
}
COMBINATIONS = [
    pytest.param(
        dict(zip(TOGGLES, values)), marks=() if values in EVERY_PAIR else pytest.mark.slow
    )
    for values in itertools.product((True, False), repeat=len(TOGGLES))
]


def pytest_configure(config):
    """Three fresh seeds for tests/test_any_answers.py, unless ANSWER_SEEDS names them.

    Drawn once, in the process that starts the run: pytest-xdist's workers
    inherit the variable, so each collects the same answer sets.
    """
    fresh = ",".join(str(secrets.randbelow(1_000_000)) for _ in range(3))
    os.environ.setdefault("ANSWER_SEEDS", fresh)


def pytest_report_header(config):
    sets = os.environ.get("ANSWER_SETS", "2")
    return f"answer sets: ANSWER_SEEDS={os.environ['ANSWER_SEEDS']} ANSWER_SETS={sets}"


def combination_id(answers: dict) -> str:
    return "-".join(
        f"{name.removeprefix('include_')}={'on' if on else 'off'}"
        for name, on in answers.items()
    )


def render(destination: Path, **answers) -> Path:
    """Copy the template's working tree (HEAD plus local changes) with these answers.

    The first rendering of a set of answers in a run is copier's; every later
    one is a copy of it (see `renderings`), file for file the same project.
    """
    with _rendering_cache(answers) as cached:
        if cached is not None and cached.is_dir():
            shutil.copytree(cached, destination, symlinks=True)
            return destination
        run_copy(
            str(TEMPLATE),
            destination,
            data=answers,
            defaults=True,
            vcs_ref="HEAD",
            quiet=True,
        )
        if cached is not None:  # kept whole or not at all
            partial = cached.with_name("partial")
            shutil.rmtree(partial, ignore_errors=True)
            shutil.copytree(destination, partial, symlinks=True)
            partial.rename(cached)
    return destination


# Where renderings are kept for the run: shared by the pytest-xdist workers.
_RENDERINGS: list[Path] = []


@contextlib.contextmanager
def locked(path: Path):
    """An exclusive lock on a file next to `path`, held across pytest-xdist workers."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{path}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield path
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@contextlib.contextmanager
def _rendering_cache(answers: dict):
    """The cached copy's path for these answers (None outside a test run), locked."""
    if not _RENDERINGS:
        yield None
        return
    key = json.dumps(answers, sort_keys=True)
    name = "-".join(f"{k}={v}" for k, v in sorted(answers.items())) or "defaults"
    name = "".join(c if c.isalnum() or c in "=-_." else "_" for c in name)[:150]
    with locked(_RENDERINGS[0] / name / "key.json") as path:
        if path.is_file() and path.read_text() != key:  # a clash of cut names
            yield None
            return
        path.write_text(key)
        yield path.parent / "tree"


def shared_root(tmp_path_factory) -> Path:
    """A folder of this run that every pytest-xdist worker sees (the run's basetemp)."""
    basetemp = tmp_path_factory.getbasetemp()
    return basetemp.parent if os.environ.get("PYTEST_XDIST_WORKER") else basetemp


@pytest.fixture(scope="session", autouse=True)
def renderings(tmp_path_factory):
    """Render each set of answers once per run: copier takes seconds, a copy milliseconds.

    The template's working tree does not change during a run, so a second
    rendering with the same answers would be the same files; tests get a copy
    of their own to change.
    """
    _RENDERINGS.append(shared_root(tmp_path_factory) / "renderings")
    yield
    _RENDERINGS.clear()


def run(command: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess:
    """Run a command in a generated project, on the Python its .python-version names."""
    return run_in(command, cwd, python_for(project_python(cwd)), **env)


def project_python(project: Path) -> str:
    """The Python a generated project pins in .python-version (0.1.0 wrote none)."""
    pinned = project / ".python-version"
    if pinned.is_file():
        return pinned.read_text().strip()
    return f"{sys.version_info.major}.{sys.version_info.minor}"


@pytest.fixture
def project(tmp_path):
    """A factory: render the template with the given answers."""

    def make(**answers) -> Path:
        return render(tmp_path / "project", **answers)

    return make


def python_for(version: str) -> str:
    """An installed interpreter for a Python version, or skip the test saying which."""
    if version == f"{sys.version_info.major}.{sys.version_info.minor}":
        return sys.executable
    candidates = [shutil.which(f"python{version}")]
    candidates += sorted(
        glob.glob(
            os.path.expanduser(f"~/.pyenv/versions/{version}.*/bin/python{version}")
        )
    )
    for candidate in filter(None, candidates):
        if (
            subprocess.run([candidate, "-c", "pass"], capture_output=True).returncode
            == 0
        ):
            return candidate
    pytest.skip(f"Python {version} is not installed on this machine")


def run_in(
    command: list[str], cwd: Path, python: str, **extra: str
) -> subprocess.CompletedProcess:
    """Run a command in a generated project, offline-safe, with uv pinned to this Python.

    A leading "uv" is the suite's own uv binary; `extra` adds to the environment.
    """
    if command[0] == "uv":
        command = [UV, *command[1:]]
    env = {key: value for key, value in os.environ.items() if key != "VIRTUAL_ENV"}
    env.update(
        AWS_EC2_METADATA_DISABLED="true", UV_PYTHON=python, UV_PYTHON_DOWNLOADS="never", **extra
    )
    # The project's Makefile says `uv`: make it this uv, not a shim.
    env["PATH"] = os.pathsep.join([str(Path(UV).parent), env.get("PATH", "")])
    return subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=900
    )


# Renderings whose environment `make install` builds, for the modules that
# then use the project as it is: each is built once per pytest-xdist worker
# that needs it. A test that changes the project puts it back. On one worker,
# test_generated_project.py (16 tests) runs before test_shipping.py and
# test_run_store.py, which leave files and the deploy group behind:
# --dist loadscope hands out the modules with the most tests first.
BUILDS = {
    # Every default: Python 3.13, every tool, a CodeZip deploy.
    "defaults": {},
    # The minimal agent on Python 3.12, unlisted tools allowed, runs in S3.
    "minimal-s3": {
        "python_version": "3.12",
        "include_sample_tools": False,
        "include_image_generation": False,
        "gate_unlisted_tools": False,
        "run_store": "s3",
        "state_bucket": "acme-agent-runs",
    },
}


@pytest.fixture(scope="session")
def built_project(tmp_path_factory):
    """A factory: the rendering BUILDS names, its environment built by `make install`, once."""
    built: dict[str, Path | str] = {}

    def of(name: str) -> Path:
        if name not in built:
            root = render(tmp_path_factory.mktemp(name) / "agent", **BUILDS[name])
            installed = run(["make", "install"], root)  # uv sync, then app/'s pins
            # It compiles the environment's bytecode, once (the Makefile says why).
            compiled = "Bytecode compiled" in installed.stderr
            built[name] = (
                root
                if installed.returncode == 0 and compiled
                else f"make install failed (or compiled nothing) for {name}:\n"
                f"{installed.stdout}{installed.stderr}"
            )
        if isinstance(built[name], str):  # every test that needs it fails, saying why
            pytest.fail(built[name])
        return built[name]

    return of


@pytest.fixture(scope="session")
def shared_environments(tmp_path_factory):
    """A factory: for a Python, the variables that give many projects one environment.

    Projects whose dependencies are the same (the same Python and provider)
    need not each build an environment: uv syncs all of them into one
    (UV_PROJECT_ENVIRONMENT), and mypy keeps one cache for all (MYPY_CACHE_DIR),
    which it checks file by file, so each project is still checked whole. One
    per pytest-xdist worker, so that no two commands sync one at once.
    """
    root = tmp_path_factory.mktemp("environments")

    def of(python: str, provider: str = "bedrock") -> dict[str, str]:
        where = root / f"{python}-{provider}"
        return {
            "UV_PROJECT_ENVIRONMENT": str(where / "venv"),
            "MYPY_CACHE_DIR": str(where / "mypy"),
        }

    return of


@pytest.fixture(scope="module")
def aws_server():
    """An AWS API (moto's server) on a free port of this machine; yields its URL.

    Its S3 keeps buckets and objects; its STS answers for account 123456789012.
    """
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


def commit_all(cwd: Path, message: str, tag: str | None = None) -> None:
    git(cwd, "add", "-A")
    git(cwd, "commit", "-q", "--allow-empty", "-m", message)
    if tag:
        git(cwd, "tag", tag)


@pytest.fixture
def git_identity(monkeypatch):
    """Who the tests' commits are by: a machine may have no git identity at all."""
    for variable in ("GIT_AUTHOR", "GIT_COMMITTER"):
        monkeypatch.setenv(f"{variable}_NAME", "Template Tests")
        monkeypatch.setenv(f"{variable}_EMAIL", "tests@example.invalid")


@pytest.fixture(scope="module")
def released(tmp_path_factory) -> Path:
    """A clone of this repository with a tag on each release, and this working tree as the newest.

    The releases are .ci/release_tags.py's, read from history, as CI tags
    them; the working tree (uncommitted changes too) is one more commit on
    top, tagged with copier.yml's template_version, so copier reads it as
    the newest release.
    """
    repo = tmp_path_factory.mktemp("releases") / "template"
    git(TEMPLATE, "clone", "-q", "--no-tags", str(TEMPLATE), str(repo))
    for version, commit in RELEASES.items():
        git(repo, "tag", version, commit)
    git(repo, "rm", "-rq", ".")
    listed = git(TEMPLATE, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    for name in filter(None, listed.split("\0")):
        source = TEMPLATE / name
        if source.is_file():  # not deleted in the working tree
            target = repo / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read_bytes())
            target.chmod(source.stat().st_mode)
    identity = ["-c", "user.name=Template Tests", "-c", "user.email=tests@example.invalid"]
    git(repo, *identity, "add", "-A")
    git(repo, *identity, "commit", "-q", "--allow-empty", "-m", CURRENT)
    git(repo, "tag", CURRENT)
    return repo
