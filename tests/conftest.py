"""Render the template into temporary folders with copier's Python API."""

import glob
import itertools
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from copier import run_copy
from uv import find_uv_bin

TEMPLATE = Path(__file__).resolve().parent.parent

# The uv of the suite's own environment, by its real path: a version
# manager's shim named `uv` may pick its interpreter from a generated
# project's .python-version and fail there.
UV = find_uv_bin()

TOGGLES = (
    "include_sample_tools",
    "include_image_generation",
    "gate_unlisted_tools",
    "agent_manages_history",
)
COMBINATIONS = [
    dict(zip(TOGGLES, values))
    for values in itertools.product((True, False), repeat=len(TOGGLES))
]


def combination_id(answers: dict) -> str:
    return "-".join(
        f"{name.removeprefix('include_')}={'on' if on else 'off'}"
        for name, on in answers.items()
    )


def render(destination: Path, **answers) -> Path:
    """Copy the template's working tree (HEAD plus local changes) with these answers."""
    run_copy(
        str(TEMPLATE),
        destination,
        data=answers,
        defaults=True,
        vcs_ref="HEAD",
        quiet=True,
    )
    return destination


def run(command: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """Run a command in a generated project, on the Python its .python-version names."""
    return run_in(command, cwd, python_for(project_python(cwd)))


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


def run_in(command: list[str], cwd: Path, python: str) -> subprocess.CompletedProcess:
    """Run a command in a generated project, offline-safe, with uv pinned to this Python.

    A leading "uv" is the suite's own uv binary.
    """
    if command[0] == "uv":
        command = [UV, *command[1:]]
    env = {key: value for key, value in os.environ.items() if key != "VIRTUAL_ENV"}
    env.update(
        AWS_EC2_METADATA_DISABLED="true", UV_PYTHON=python, UV_PYTHON_DOWNLOADS="never"
    )
    # The project's Makefile says `uv`: make it this uv, not a shim.
    env["PATH"] = os.pathsep.join([str(Path(UV).parent), env.get("PATH", "")])
    return subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=900
    )


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
