"""The CodeZip: app/ and its locked dependencies, installed for AgentCore's aarch64 Linux.

AgentCore runs the zip as it is, so what is in it is what runs: the code in
app/ and nothing of the work tree (no tests, .env, .venv or local state),
and exactly app/pyproject.toml's pins, which are uv.lock's. It is built on
this machine before the synth, so no Docker is needed, and kept under
cdk.out/ by a hash of what went into it, so an unchanged app/ is not built
again.

The session-binding endpoint's Lambda code (with user tokens) is built the
same way: the package's source, and only the libraries its handler imports
(authlib with requests, boto3) with what they need, at the same pins, for
the Lambda's arm64 Linux. Not Strands: the handler imports nothing that
pulls it.
"""

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import tomllib
from collections.abc import Callable
from pathlib import Path

from . import project

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "app"
BUILT = ROOT / "cdk.out" / ".code-zips"
ENDPOINT_BUILT = ROOT / "cdk.out" / ".endpoint-zips"

# What the session-binding endpoint's handler imports besides the standard
# library and the package: Sign in with Slack's OpenID Connect client with
# the HTTP client it runs on (authlib's requests integration), and the AWS
# SDK, bundled rather than the Lambda runtime's, which can predate
# CompleteResourceTokenAuth. A test imports what the handler names from
# what the bundle holds.
ENDPOINT_REQUIREMENTS = ("authlib", "requests", "boto3")
# The handler the endpoint's Lambda runs: a module of the package, which the
# bundle holds whole (app/<package>/binding/endpoint.py).
ENDPOINT_MODULE = "binding.endpoint"
ENDPOINT_HANDLER = f"{project.PACKAGE_NAME}.{ENDPOINT_MODULE}.handler"

# What never ships from app/: the AgentCore CLI leaves out the same, and
# app/uv.lock is what `agentcore dev` leaves there.
LEFT_OUT = (
    ".git", ".venv", "__pycache__", ".pytest_cache", ".ruff_cache", ".mypy_cache",
    ".DS_Store", "node_modules", ".env", ".env.*", "uv.lock", "*.pyc",
)  # fmt: skip

# Tried in order while uv says a wheel is missing for one of them, as the
# AgentCore CLI does: some wheels exist only for the newer glibc tags.
PLATFORMS = ("aarch64-manylinux2014", "aarch64-manylinux_2_28", "aarch64-manylinux_2_34")
_NO_WHEEL = re.compile(
    r"has no wheels with a matching (?:platform|Python ABI) tag|no compatible (?:wheels|tags) found"
    r"|has no usable wheels",
    re.I,
)


class BundleError(RuntimeError):
    """The code zip could not be built; the message says why in one line."""


def require_pins(code: Path = APP) -> None:
    """A zip without app/'s pins would deploy an agent that cannot import its libraries."""
    pins = tomllib.loads((code / "pyproject.toml").read_text())["project"]["dependencies"]
    if not pins:
        raise BundleError(
            "app/pyproject.toml pins nothing yet: run make install (or make lock) before deploying"
        )


def code_files(code: Path = APP) -> list[Path]:
    """The files of app/ that ship, in a stable order."""
    ignored = shutil.ignore_patterns(*LEFT_OUT)
    found = []
    for folder, subfolders, files in os.walk(code):
        skip = ignored(folder, [*subfolders, *files])
        subfolders[:] = sorted(name for name in subfolders if name not in skip)
        found += [Path(folder, name) for name in sorted(files) if name not in skip]
    return found


def fingerprint(code: Path = APP) -> str:
    """A hash of every shipped file and of the Python the dependencies are built for."""
    digest = hashlib.sha256(f"{project.PYTHON_VERSION} {PLATFORMS}".encode())
    for path in code_files(code):
        digest.update(str(path.relative_to(code)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def built_code_zip(code: Path = APP, built: Path = BUILT) -> tuple[Path, str]:
    """The folder the zip is made of, built once per fingerprint, and that fingerprint.

    Only the latest is kept: each is the size of the deploy, and every edit
    of app/ makes a new one.
    """
    return _built(fingerprint(code), built, lambda output: _build(code, output))


def endpoint_pins(code: Path = APP) -> list[str]:
    """app/pyproject.toml's pins, which must pin what the endpoint's handler imports."""
    pins = tomllib.loads((code / "pyproject.toml").read_text())["project"]["dependencies"]
    pinned = {re.split(r"[\s\[=<>!~;]", pin, maxsplit=1)[0].lower() for pin in pins}
    missing = [name for name in ENDPOINT_REQUIREMENTS if name not in pinned]
    if missing:
        raise BundleError(
            f"app/pyproject.toml pins no {', '.join(missing)}, which the session-binding "
            "endpoint imports: run make install (or make lock) before deploying"
        )
    return list(pins)


def endpoint_fingerprint(code: Path = APP) -> str:
    """A hash of the package's files, the pins and the Python the endpoint's libraries are for."""
    package = code / project.PACKAGE_NAME
    digest = hashlib.sha256(
        f"{project.PYTHON_VERSION} {PLATFORMS} {ENDPOINT_REQUIREMENTS}".encode()
        + "\n".join(endpoint_pins(code)).encode()
    )
    for path in code_files(package):
        digest.update(str(path.relative_to(code)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def built_endpoint_bundle(code: Path = APP, built: Path = ENDPOINT_BUILT) -> tuple[Path, str]:
    """The folder the endpoint's Lambda code is made of, built once per fingerprint, and that."""
    module = Path(project.PACKAGE_NAME, *ENDPOINT_MODULE.split(".")).with_suffix(".py")
    if not (code / module).is_file():
        raise BundleError(
            f"app/{module.as_posix()} is missing: the session-binding endpoint's Lambda runs "
            f"{ENDPOINT_HANDLER}"
        )
    return _built(endpoint_fingerprint(code), built, lambda output: _build_endpoint(code, output))


def _built(key: str, built: Path, build: Callable[[Path], None]) -> tuple[Path, str]:
    folder = built / key
    for stale in built.iterdir() if built.is_dir() else ():
        if stale.name != key:
            shutil.rmtree(stale)
    if not folder.is_dir():
        partial = built / f".{key}.partial"
        shutil.rmtree(partial, ignore_errors=True)
        try:
            build(partial)
        except BaseException:
            shutil.rmtree(partial, ignore_errors=True)
            raise
        partial.rename(folder)
    return folder, key


def _build(code: Path, output: Path) -> None:
    """Copy the code, then install its pinned dependencies beside it for aarch64."""
    output.mkdir(parents=True)
    _copy(code, code, output)
    _install(["-r", "pyproject.toml"], code, output, "app/pyproject.toml's pins")


def _build_endpoint(code: Path, output: Path) -> None:
    """Copy the package, then install what its handler imports, at app/'s pins, for aarch64."""
    output.mkdir(parents=True)
    _copy(code / project.PACKAGE_NAME, code, output)
    with tempfile.TemporaryDirectory() as folder:
        constraints = Path(folder, "constraints.txt")
        constraints.write_text("\n".join(endpoint_pins(code)) + "\n")
        what = ", ".join(ENDPOINT_REQUIREMENTS)
        _install([*ENDPOINT_REQUIREMENTS, "-c", str(constraints)], code, output, what)


def _copy(folder: Path, code: Path, output: Path) -> None:
    for path in code_files(folder):
        target = output / path.relative_to(code)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)


def _install(requirements: list[str], code: Path, output: Path, what: str) -> None:
    uv = shutil.which("uv")
    if uv is None:
        raise BundleError(f"the code zip needs uv on PATH to install {what}")
    for platform in PLATFORMS:
        installed = subprocess.run(
            [
                uv, "pip", "install", "--quiet", *requirements, "--target", str(output),
                "--python-version", project.PYTHON_VERSION, "--python-platform", platform,
                "--only-binary", ":all:", "--no-compile",
            ],
            cwd=code,
            capture_output=True,
            text=True,
            env={**os.environ, "UV_PYTHON_DOWNLOADS": "never"},
        )  # fmt: skip
        if installed.returncode == 0 or not _NO_WHEEL.search(installed.stderr):
            break
    if installed.returncode != 0:
        last = (installed.stderr.strip().splitlines() or ["no output"])[-1]
        raise BundleError(f"installing {what} for aarch64 failed: {last}")
