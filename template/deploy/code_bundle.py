"""The CodeZip: app/ and its locked dependencies, installed for AgentCore's aarch64 Linux.

AgentCore runs the zip as it is, so what is in it is what runs: the code in
app/ and nothing of the work tree (no tests, .env, .venv or local state),
and exactly app/pyproject.toml's pins, which are uv.lock's. It is built on
this machine before the synth, so no Docker is needed, and kept under
cdk.out/ by a hash of what went into it, so an unchanged app/ is not built
again.

The session-binding endpoint's Lambda code (with user tokens) is built the
same way: the package's source, and only the `binding` dependency group
(authlib, requests, boto3) with what they need, at uv.lock's versions, for
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

# The dependency group of the session-binding endpoint's libraries (the
# project's pyproject.toml): what its handler imports besides the standard
# library and the package. Its bundle installs the group alone, as uv.lock
# resolves it; a test imports what the handler names from what it holds.
ENDPOINT_GROUP = "binding"
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


def endpoint_requirements(root: Path = ROOT) -> list[str]:
    """The endpoint's libraries as uv.lock pins them (the binding group): `name==version ; ...`."""
    uv = shutil.which("uv")
    if uv is None:
        raise BundleError("the endpoint's bundle needs uv on PATH to read uv.lock")
    options = ["--frozen", "--no-hashes", "--no-header", "--no-annotate", "--no-emit-project"]
    exported = subprocess.run(
        [uv, "export", *options, "--only-group", ENDPOINT_GROUP, "--format", "requirements-txt"],
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, "UV_PYTHON_DOWNLOADS": "never"},
    )
    requirements = [line.strip() for line in exported.stdout.splitlines() if line.strip()]
    if exported.returncode != 0 or not requirements:
        last = (exported.stderr.strip().splitlines() or ["it pins none"])[-1]
        raise BundleError(
            f"uv.lock's {ENDPOINT_GROUP} group, the session-binding endpoint's libraries, could "
            f"not be read ({last}): run make install (or make lock) before deploying"
        )
    return requirements


def endpoint_fingerprint(code: Path = APP, root: Path = ROOT) -> str:
    """A hash of the package's files, the endpoint's pins and the Python they are for."""
    package = code / project.PACKAGE_NAME
    digest = hashlib.sha256(
        f"{project.PYTHON_VERSION} {PLATFORMS} {ENDPOINT_GROUP}".encode()
        + "\n".join(endpoint_requirements(root)).encode()
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
    return _built(
        endpoint_fingerprint(code, code.parent),
        built,
        lambda output: _build_endpoint(code, output),
    )


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
    """Copy the package, then install the binding group's pins beside it, for aarch64."""
    output.mkdir(parents=True)
    _copy(code / project.PACKAGE_NAME, code, output)
    with tempfile.TemporaryDirectory() as folder:
        requirements = Path(folder, "requirements.txt")
        requirements.write_text("\n".join(endpoint_requirements(code.parent)) + "\n")
        what = f"uv.lock's {ENDPOINT_GROUP} group"
        _install(["-r", str(requirements)], code, output, what)


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
