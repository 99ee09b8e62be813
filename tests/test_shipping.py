"""Both deploy paths, run as far as this machine allows (no AWS, no Docker).

CodeZip: the AgentCore CLI's own install command for aarch64 must yield
exactly uv.lock's versions. Container: the image's command must serve from a
read-only copy of app/ with the image's environment, writing only where the
Dockerfile gives its user a folder.
"""

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tomllib
from pathlib import Path

import httpx
import pytest
from conftest import run
from packaging.markers import Marker
from packaging.requirements import Requirement

pytestmark = pytest.mark.slow

# What `agentcore package` (CLI 0.30) runs in the code folder; uv.lock is not
# read. It tries each platform in turn while uv says a wheel is missing.
CLI_INSTALL = [
    "pip", "install", "-r", "pyproject.toml", "--python-version", "3.13", "--only-binary", ":all:",
]  # fmt: skip
CLI_PLATFORMS = ["aarch64-manylinux2014", "aarch64-manylinux_2_28", "aarch64-manylinux_2_34"]
CLI_NO_WHEELS = re.compile(
    r"has no wheels with a matching (?:platform|Python ABI) tag|no compatible (?:wheels|tags) found"
    r"|has no usable wheels",
    re.I,
)
AGENTCORE_LINUX = {
    "sys_platform": "linux",
    "platform_system": "Linux",
    "platform_machine": "aarch64",
    "os_name": "posix",
    "implementation_name": "cpython",
    "platform_python_implementation": "CPython",
    "python_version": "3.13",
    "python_full_version": "3.13.0",
}
SESSION = "cli-session-0123456789abcdef0123456789"


@pytest.fixture(scope="module")
def installed_project(built_project):
    """The default rendering (a CodeZip deploy), its environment built and app/ pinned by `make install`."""
    root = built_project("defaults")
    assert 'DEPLOY_BUILD = "CodeZip"' in (root / "deploy" / "project.py").read_text()
    return root


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def cli_install(code: Path, staging: Path) -> Path:
    """What `agentcore package` installs for a code folder, on the first platform that has wheels."""
    for platform in CLI_PLATFORMS:
        result = run(["uv", *CLI_INSTALL, "--python-platform", platform, "--target", str(staging)], code)
        if result.returncode == 0 or not CLI_NO_WHEELS.search(result.stderr):
            break
    assert result.returncode == 0, result.stderr[-3000:]
    return staging


@pytest.fixture(scope="module")
def shipped(installed_project, tmp_path_factory) -> Path:
    """The CodeZip staging folder of the default project's app/."""
    return cli_install(installed_project / "app", tmp_path_factory.mktemp("staging"))


def installed_versions(folder: Path) -> dict[str, str]:
    """The distributions installed in a --target folder, by normalized name."""
    installed = {}
    for metadata in folder.glob("*.dist-info/METADATA"):
        fields = dict(re.findall(r"^(Name|Version): (.+)$", metadata.read_text(), re.M))
        installed[normalized(fields["Name"])] = fields["Version"]
    return installed


def locked_for_agentcore(project: Path) -> dict[str, str]:
    """uv.lock's version of every pin in app/pyproject.toml whose markers hold on AgentCore's Linux."""
    lock = tomllib.loads((project / "uv.lock").read_text())
    locked = {normalized(package["name"]): package.get("version") for package in lock["package"]}
    pins = tomllib.loads((project / "app" / "pyproject.toml").read_text())["project"]["dependencies"]
    wanted = [Requirement(pin) for pin in pins]
    applies = [r for r in wanted if not r.marker or Marker(str(r.marker)).evaluate(AGENTCORE_LINUX)]
    return {normalized(r.name): locked[normalized(r.name)] for r in applies}


def test_the_clis_aarch64_install_yields_exactly_the_locked_versions(installed_project, shipped):
    assert installed_versions(shipped) == locked_for_agentcore(installed_project)


# What the default deploy carries against a floor agent's (strands-agents and
# bedrock-agentcore at the same locked versions). bench/weight.py measured
# 1.23 (docs/performance.md); issue 18 set 1.5 as the limit. The ceiling
# leaves room for releases that grow a little, and fails before the limit.
WEIGHT_CEILING = 1.35


def installed_bytes(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def test_the_deploy_weighs_at_most_a_third_more_than_a_floor_agents(
    installed_project, shipped, tmp_path
):
    lock = tomllib.loads((installed_project / "uv.lock").read_text())
    versions = {package["name"]: package.get("version") for package in lock["package"]}
    floor = tmp_path / "floor"
    floor.mkdir()
    pins = [f'"{name}=={versions[name]}"' for name in ("strands-agents", "bedrock-agentcore")]
    (floor / "pyproject.toml").write_text(
        f'[project]\nname = "floor"\nversion = "0"\ndependencies = [{", ".join(pins)}]\n'
    )
    floor_bytes = installed_bytes(cli_install(floor, tmp_path / "floor-staging"))

    ratio = installed_bytes(shipped) / floor_bytes
    assert ratio <= WEIGHT_CEILING, f"the deploy is {ratio:.2f} times the floor's size"


def image_stage(dockerfile: str) -> dict:
    """ENV, WORKDIR and CMD of the image's last stage, as Docker would apply them."""
    final = dockerfile.split("\nFROM ")[-1]
    env_block = re.search(r"^ENV (.+?)(?<!\\)$", final, re.M | re.S).group(1)
    env = dict(re.findall(r"(\w+)=(\S+)", env_block.replace("\\\n", " ")))
    (workdir,) = re.findall(r"^WORKDIR (\S+)$", final, re.M)
    (cmd,) = re.findall(r"^CMD (\[.+\])$", final, re.M)
    return {"env": env, "workdir": workdir, "cmd": json.loads(cmd)}


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {
        str(path.relative_to(folder)): (path.stat().st_size, path.stat().st_mtime_ns)
        for path in folder.rglob("*")
    }


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_the_image_command_serves_from_read_only_code_and_writes_only_its_own_folders(
    installed_project, tmp_path
):
    image = image_stage((installed_project / "Dockerfile").read_text())
    # The image's paths, mapped onto this machine.
    code = tmp_path / "app"  # /app, root-owned and read-only
    shutil.copytree(installed_project / "app", code)
    compiled = subprocess.run(
        [sys.executable, "-m", "compileall", "-q", "--invalidation-mode", "unchecked-hash", str(code)]
    )
    assert compiled.returncode == 0
    workdir, sessions = tmp_path / "work", tmp_path / "sessions"  # /var/lib/agent, /mnt/sessions
    workdir.mkdir()
    sessions.mkdir()
    if os.geteuid() != 0:  # root ignores permissions; the snapshot below still catches writes
        for path in [code, *code.rglob("*")]:
            path.chmod(path.stat().st_mode & 0o555)
    before = snapshot(code)
    venv_bin = installed_project / ".venv" / "bin"
    port = free_port()
    mapped = {"/app": str(code), "/mnt/sessions": str(sessions), "/opt/venv/bin": str(venv_bin)}
    env = dict(image["env"])
    env["PATH"] = env["PATH"].replace("$PATH", os.environ["PATH"])
    env = {key: _mapped(value, mapped) for key, value in env.items()}
    env.update(
        HOME=str(workdir),
        PORT=str(port),
        MODEL_PROVIDER="rehearsal",
        AWS_EC2_METADATA_DISABLED="true",
        # The command runs under opentelemetry-instrument: spans go to stdout
        # here, where AgentCore would send them to its Observability.
        OTEL_TRACES_EXPORTER="console",
        OTEL_METRICS_EXPORTER="none",
        OTEL_LOGS_EXPORTER="none",
        OTEL_BSP_SCHEDULE_DELAY="50",  # milliseconds: export as soon as a span ends
    )
    command = [_mapped(part, mapped) for part in image["cmd"]]
    assert not image["workdir"].startswith("/app")  # tool output lands outside the code
    server = subprocess.Popen(
        command, cwd=workdir, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
            _wait_until_serving(client, server)
            reply = client.post(
                "/invocations",
                json={"prompt": "hello"},
                headers={"X-Amzn-Bedrock-AgentCore-Runtime-Session-Id": SESSION},
            )
    finally:
        # SIGINT, not SIGTERM: uvicorn re-raises SIGTERM after its shutdown and
        # the process dies before the tracer provider flushes the last spans.
        server.send_signal(signal.SIGINT)
        stdout, stderr = server.communicate(timeout=30)

    assert reply.status_code == 200
    assert "my-welt-agent-rehearsal-question" in reply.text, reply.text  # rehearsal asks first
    assert snapshot(code) == before, "the server wrote into the code folder"
    assert any(sessions.rglob("threads/*.json")), "the stored run went to SESSION_STORAGE_DIR"
    assert '"name": "invoke_agent' in stdout, stderr[-2000:]


def _mapped(value: str, paths: dict[str, str]) -> str:
    for inside, outside in paths.items():
        value = value.replace(inside, outside)
    return value


def _wait_until_serving(client: httpx.Client, server: subprocess.Popen) -> None:
    for _ in range(600):
        if server.poll() is not None:
            raise AssertionError(f"the image command exited: {server.communicate()[1][-3000:]}")
        try:
            client.get("/ping")
            return
        except httpx.TransportError:
            with contextlib.suppress(subprocess.TimeoutExpired):
                server.wait(timeout=0.1)  # still starting: give it a tenth of a second
    raise AssertionError("the image command never answered /ping")


# ---------------------------------------------------------------- the deployment's code zip

# What a local run leaves under app/, none of which may ship.
LOCAL_LEFTOVERS = {
    ".env": "SECRET=1\n",
    ".venv/pyvenv.cfg": "home = /usr\n",
    "uv.lock": "version = 1\n",
    "my_welt_agent/__pycache__/agent.cpython-313.pyc": "",
    ".pytest_cache/README.md": "",
}


@pytest.fixture(scope="module")
def code_zip(installed_project) -> Path:
    """The folder `make synth ENV=staging` zips for the runtime, after local runs left files in app/."""
    app = installed_project / "app"
    (installed_project / "cdk.out" / ".code-zips" / "an-older-app").mkdir(parents=True)
    for path, text in LOCAL_LEFTOVERS.items():
        (app / path).parent.mkdir(parents=True, exist_ok=True)
        (app / path).write_text(text)
    try:
        synthesized = run(["make", "synth", "ENV=staging"], installed_project)
    finally:
        for path in LOCAL_LEFTOVERS:
            (app / path).unlink()
    assert synthesized.returncode == 0, synthesized.stderr[-3000:]
    assembly = installed_project / "cdk.out" / "staging"
    files = json.loads((assembly / "MyWeltAgent-staging.assets.json").read_text())["files"]
    (code,) = [asset for asset in files.values() if asset["displayName"] == "Code"]
    assert code["source"]["packaging"] == "zip"
    return assembly / code["source"]["path"]


def test_make_synth_writes_both_stacks_of_the_environment_offline(code_zip):
    assembly = code_zip.parent

    assert sorted(path.name for path in assembly.glob("*.template.json")) == [
        "MyWeltAgent-staging-ci-role.template.json",
        "MyWeltAgent-staging.template.json",
    ]


def test_the_code_zip_holds_app_and_exactly_the_locked_aarch64_dependencies(
    installed_project, code_zip
):
    app = installed_project / "app"
    shipped_code = {
        str(path.relative_to(code_zip))
        for path in code_zip.rglob("*")
        if path.is_file() and (path.relative_to(code_zip).parts[0] in ("main.py", "pyproject.toml", "my_welt_agent"))
    }  # fmt: skip
    expected_code = {
        str(path.relative_to(app))
        for path in app.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    assert shipped_code == expected_code

    installed = installed_versions(code_zip)
    assert installed == locked_for_agentcore(installed_project)
    assert "aws-cdk-lib" not in installed and "pytest" not in installed  # tools stay out


def test_the_code_zip_leaves_out_tests_local_state_and_secrets(code_zip):
    names = {path.relative_to(code_zip).parts[0] for path in code_zip.iterdir()}

    assert not {"tests", ".env", ".venv", "uv.lock", ".pytest_cache", "deploy", "cdk.out"} & names
    assert not list(code_zip.rglob("__pycache__"))
    assert not list(code_zip.rglob("*.pyc"))


def test_only_the_code_zip_in_use_is_kept(installed_project, code_zip):
    kept = [path.name for path in (installed_project / "cdk.out" / ".code-zips").iterdir()]

    assert len(kept) == 1 and kept[0] != "an-older-app"


def test_make_install_after_a_synth_keeps_the_cdk_it_installed(installed_project):
    """`uv sync` removes what the default groups leave out: here the CDK, which takes a while to install."""
    synths_install = ["uv", "run", "--group", "deploy", "python", "-c", "pass"]  # make synth's uv run
    finds_cdk = "import importlib.util, sys; sys.exit(importlib.util.find_spec('aws_cdk') is None)"
    cdk_installed = ["uv", "run", "--no-sync", "python", "-c", finds_cdk]
    assert run(synths_install, installed_project).returncode == 0
    assert run(cdk_installed, installed_project).returncode == 0

    installed = run(["make", "install"], installed_project)

    assert installed.returncode == 0, installed.stderr[-3000:]
    assert run(cdk_installed, installed_project).returncode == 0, installed.stderr[-3000:]
    assert "Uninstalled" not in installed.stderr, installed.stderr[-3000:]
