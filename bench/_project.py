"""Shared by the benchmarks: a rendered default project with its environment.

The default project pins its Python in .python-version (3.13; 3.12 at the
least), so uv builds its environment with a matching interpreter from this
machine, never with the Python running the benchmark.
"""

import atexit
import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import httpx
from uv import find_uv_bin

TEMPLATE = Path(__file__).resolve().parent.parent

# uv by its real path: a version manager's `uv` shim can fail inside a folder
# with a .python-version file.
UV = find_uv_bin()


def project_python(project: Path) -> str:
    """The Python version the project pins, such as "3.13"."""
    return (project / ".python-version").read_text().strip()


def python_for(version: str) -> str:
    """The path of an installed interpreter for a version; fails naming the version."""
    if version == f"{sys.version_info.major}.{sys.version_info.minor}":
        return sys.executable
    candidates = [shutil.which(f"python{version}")]
    candidates += sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{version}.*/bin/python{version}")))
    for candidate in filter(None, candidates):
        if subprocess.run([candidate, "-c", "pass"], capture_output=True).returncode == 0:
            return candidate
    raise SystemExit(f"the default project needs Python {version}, which is not installed here")


def uv_env(python: str | None = None) -> dict[str, str]:
    """This environment, offline-safe, with uv pinned to an interpreter when one is given."""
    env = {key: value for key, value in os.environ.items() if key != "VIRTUAL_ENV"}
    env.update(AWS_EC2_METADATA_DISABLED="true", UV_PYTHON_DOWNLOADS="never")
    if python:
        env["UV_PYTHON"] = python
    return env


def rendered_template() -> Path:
    """The default project rendered in a temporary folder, not yet synced; removed at exit."""
    from copier import run_copy
    from copier.errors import DirtyLocalWarning

    # The benchmarks render HEAD plus local changes on purpose.
    warnings.simplefilter("ignore", DirtyLocalWarning)
    root = Path(tempfile.mkdtemp(prefix="bench-")) / "agent"
    atexit.register(shutil.rmtree, root.parent, ignore_errors=True)
    run_copy(str(TEMPLATE), root, defaults=True, vcs_ref="HEAD", quiet=True)
    return root


def rendered_project() -> Path:
    """The default project in a temporary folder, synced and compiled; removed at exit.

    Bytecode is compiled up front, so a timed run measures imports and
    requests, not the first run writing .pyc files.
    """
    root = rendered_template()
    env = uv_env(python_for(project_python(root)))
    subprocess.run([UV, "sync", "-q"], cwd=root, env=env, check=True)
    python = str(root / ".venv" / "bin" / "python")
    subprocess.run([python, "-m", "compileall", "-q", "-j", "0", str(root)], cwd=root, check=False)
    return root


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def stop(process: subprocess.Popen) -> None:
    """Terminate a server, and kill it if it does not go within ten seconds."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def serve(project: Path, script: str, port: int, **extra_env: str) -> subprocess.Popen:
    """Run a script with the project's interpreter in app/ (its code folder), serving on a port."""
    env = {**uv_env(), "PORT": str(port), **extra_env}
    return subprocess.Popen(
        [str(project / ".venv" / "bin" / "python"), "-c", script],
        cwd=project / "app",
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def wait_until_healthy(port: int, timeout: float = 60.0) -> float:
    """Seconds until GET /ping answers; polls every millisecond."""
    start = time.perf_counter()
    while time.perf_counter() - start < timeout:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/ping", timeout=1).status_code == 200:
                return time.perf_counter() - start
        except httpx.TransportError:
            time.sleep(0.001)
    raise TimeoutError(f"nothing answered /ping on port {port}")


def median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]
