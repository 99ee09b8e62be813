"""Shared by the benchmarks: a rendered default project with its environment."""

import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

TEMPLATE = Path(__file__).resolve().parent.parent


def uv_env() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "VIRTUAL_ENV"}
    env.update(AWS_EC2_METADATA_DISABLED="true", UV_PYTHON=sys.executable, UV_PYTHON_DOWNLOADS="never")
    return env


def rendered_project() -> Path:
    """The default project in a temporary folder, its environment synced."""
    from copier import run_copy

    root = Path(tempfile.mkdtemp(prefix="bench-")) / "agent"
    run_copy(str(TEMPLATE), root, defaults=True, vcs_ref="HEAD", quiet=True)
    subprocess.run(["uv", "sync", "-q"], cwd=root, env=uv_env(), check=True)
    return root


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def serve(project: Path, script: str, port: int) -> subprocess.Popen:
    """Run a script with the project's interpreter, serving on a port."""
    env = {**uv_env(), "PORT": str(port)}
    return subprocess.Popen(
        [str(project / ".venv" / "bin" / "python"), "-c", script],
        cwd=project,
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
