"""What a deploy carries: the default project's runtime packages against a floor agent's.

On AgentCore Runtime V1 every new Slack thread is a new microVM that loads
the deploy, and AWS measured session starts growing with its size (about
5 s at 200 MB, 30 s at 2 GB). The floor is the least a Strands agent on
AgentCore installs: strands-agents and bedrock-agentcore, at the versions
the project's uv.lock holds. Three sides, from one rendered default project:

- floor: those two packages alone;
- project: the runtime packages as uv.lock has them (`uv sync --no-default-groups`),
  with pyproject.toml's exclude-dependencies in force;
- without exclusions: the same project with that list deleted and relocked,
  which is what 0.4.0 shipped.

Each side is measured twice: a local environment (`uv sync --no-default-groups` on
this machine, the issue's measure) and the CodeZip staging folder, built by
the AgentCore CLI's own command (`uv pip install -r pyproject.toml --target
... --python-platform aarch64-manylinux2014 --only-binary :all:`, run in the
code folder) for the ARM64 machines AgentCore runs. Sizes are the bytes of
every installed file, bytecode caches left out (the CLI strips them).

    uv run python bench/weight.py [--smoke]   # --smoke: the same work; there is nothing to repeat
"""

import re
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _project import UV, arguments, project_python, python_for, rendered_template, uv_env

MIB = 1024 * 1024


def installed_bytes(folder: Path) -> tuple[int, int]:
    """Bytes of every file under the folder (no __pycache__), and the number of distributions."""
    total = sum(
        path.stat().st_size
        for path in folder.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    )
    return total, len(list(folder.rglob("*.dist-info")))


def site_packages(environment: Path) -> Path:
    (found,) = environment.glob("lib/python*/site-packages")
    return found


def local_environment(project: Path, env: dict) -> Path:
    environment = project.parent / f"{project.name}-env"
    subprocess.run(
        [UV, "sync", "-q", "--no-default-groups", "--no-install-project", "--frozen"],
        cwd=project,
        env={**env, "UV_PROJECT_ENVIRONMENT": str(environment)},
        check=True,
    )
    return site_packages(environment)


def codezip_staging(code: Path, python_version: str, env: dict) -> Path:
    """The CLI's install, trying its platforms in turn while a wheel is missing for one."""
    staging = code.parent / f"{code.parent.name}-staging"
    for platform in ("aarch64-manylinux2014", "aarch64-manylinux_2_28", "aarch64-manylinux_2_34"):
        installed = subprocess.run(
            [UV, "pip", "install", "-q", "-r", "pyproject.toml", "--target", str(staging),
             "--python-platform", platform, "--python-version", python_version,
             "--only-binary", ":all:"],
            cwd=code, env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        if installed.returncode == 0:
            return staging
    raise SystemExit(f"the CLI's install failed on every platform:\n{installed.stderr}")


def locked_version(project: Path, name: str) -> str:
    lock = tomllib.loads((project / "uv.lock").read_text())
    (version,) = [package["version"] for package in lock["package"] if package["name"] == name]
    return version


def floor_project(project: Path, root: Path, env: dict) -> Path:
    """strands-agents and bedrock-agentcore at the project's locked versions, locked likewise."""
    floor = root / "floor"
    floor.mkdir()
    pins = [
        f'"{name}=={locked_version(project, name)}"'
        for name in ("strands-agents", "bedrock-agentcore")
    ]
    (floor / "pyproject.toml").write_text(
        '[project]\nname = "floor"\nversion = "0"\nrequires-python = ">=3.12"\n'
        f"dependencies = [{', '.join(pins)}]\n\n[tool.uv]\npackage = false\n"
    )
    subprocess.run([UV, "lock", "-q"], cwd=floor, env=env, check=True)
    return floor


def without_exclusions(project: Path, root: Path, env: dict) -> Path:
    """A copy of the project with exclude-dependencies deleted, relocked and re-pinned."""
    copy = root / "unexcluded"
    subprocess.run(["cp", "-a", str(project), str(copy)], check=True)
    manifest = copy / "pyproject.toml"
    text = re.sub(
        r"\nexclude-dependencies = \[.*?\n\]\n", "\n", manifest.read_text(), flags=re.DOTALL
    )
    manifest.write_text(text)
    subprocess.run([UV, "lock", "-q"], cwd=copy, env=env, check=True)
    return copy


def pinned_code_folder(project: Path, env: dict) -> Path:
    """app/ with its pyproject.toml written from uv.lock, as `make lock` leaves it."""
    subprocess.run(
        [UV, "run", "-q", "--no-sync", "--no-project", "python", "scripts/runtime_pins.py"],
        cwd=project,
        env={**env, "UV": UV},
        check=True,
    )
    return project / "app"


def main() -> None:
    project = rendered_template()
    version = project_python(project)
    env = uv_env(python_for(version))
    subprocess.run([UV, "lock", "-q"], cwd=project, env=env, check=True)
    root = Path(tempfile.mkdtemp(dir=project.parent))
    floor = floor_project(project, root, env)
    unexcluded = without_exclusions(project, root, env)

    sides = {"floor": floor, "project": project, "without exclusions": unexcluded}
    local = {name: installed_bytes(local_environment(path, env)) for name, path in sides.items()}
    floor_code = floor / "app"
    floor_code.mkdir()
    (floor_code / "pyproject.toml").write_text((floor / "pyproject.toml").read_text())
    shipped = {
        "floor": installed_bytes(codezip_staging(floor_code, version, env)),
        "project": installed_bytes(codezip_staging(pinned_code_folder(project, env), version, env)),
        "without exclusions": installed_bytes(
            codezip_staging(pinned_code_folder(unexcluded, env), version, env)
        ),
    }

    print(f"strands-agents {locked_version(project, 'strands-agents')}, "
          f"bedrock-agentcore {locked_version(project, 'bedrock-agentcore')}, Python {version}")  # fmt: skip
    for title, figures in (
        ("uv sync --no-default-groups, this machine", local),
        ("CodeZip staging, aarch64", shipped),
    ):
        base = figures["floor"][0]
        print(f"\n{title}")
        for name, (size, count) in figures.items():
            print(
                f"  {name:<20} {size / MIB:7.1f} MiB  {count:4d} distributions  {size / base:5.2f}x floor"
            )


if __name__ == "__main__":
    arguments(__doc__, {})
    main()
