"""The generated project passes its own checks: uv sync, ruff, mypy, and its tests."""

import json
import re

import pytest
from conftest import run
from test_compatibility import PINNED

pytestmark = pytest.mark.slow

# The richest rendering (history, a provider extra, MCP) runs at the floors and at
# the newest releases in test_compatibility.py. Both builds are conftest's BUILDS,
# which test_shipping.py and test_run_store.py use after these tests.
CASES = {
    "defaults (every tool, Python 3.13)": "defaults",
    "minimal agent on Python 3.12, unlisted tools allowed, runs in S3": "minimal-s3",
}


@pytest.fixture(
    params=CASES.values(),
    ids=CASES.keys(),
    scope="module",
)
def built(request, built_project):
    """A rendered project with its environment built by uv (`make install`)."""
    return built_project(request.param)


def test_a_uv_run_after_make_install_syncs_quietly(built):
    """`uv run` syncs first; it must not compile the whole environment again and say so."""
    result = run(["uv", "run", "python", "-c", "pass"], built)

    assert result.returncode == 0, result.stderr
    assert result.stderr == ""


def test_ruff_check_passes_untouched(built):
    result = run(["uv", "run", "--no-sync", "ruff", "check", "."], built)

    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_leaves_every_file_as_rendered(built):
    result = run(["uv", "run", "--no-sync", "ruff", "format", "--check", "."], built)

    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_passes_untouched(built):
    result = run(["uv", "run", "--no-sync", "mypy"], built)

    assert result.returncode == 0, result.stdout + result.stderr
    last = result.stdout.splitlines()[-1]
    assert last.startswith("Success: no issues found"), result.stdout


def test_make_lint_fails_on_a_type_error(built):
    """make lint runs the type checker: code ruff passes but mypy refuses fails it."""
    path = built / "app" / "my_welt_agent" / "yours" / "mistyped.py"
    path.write_text('def answer() -> int:\n    return "forty-two"\n')
    try:
        result = run(["make", "lint"], built)
    finally:
        path.unlink()

    assert result.returncode != 0, result.stdout + result.stderr
    assert "All checks passed!" in result.stdout  # ruff found nothing
    refused = 'mistyped.py:2: error: Incompatible return value type (got "str", expected "int")'
    assert refused in result.stdout, result.stdout


def test_lockfile_is_created_and_current(built):
    result = run(["uv", "lock", "--check"], built)

    assert (built / "uv.lock").is_file()
    assert result.returncode == 0, result.stderr


def test_generated_test_suite_passes(built):
    result = run(
        ["uv", "run", "--no-sync", "pytest", "-q", "-p", "no:cacheprovider"], built
    )

    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    summary = re.search(r"(\d+) passed", result.stdout)
    assert summary and int(summary.group(1)) >= 30, result.stdout[-2000:]
    assert "failed" not in result.stdout.splitlines()[-1]


def test_the_user_token_deploy_tests_pass_with_the_cdk_installed(built):
    """The project's synth tests of user tokens, which skip without the CDK, as its CI runs them.

    Its CI's synth job installs the deploy group first; so does this (`uv run
    --group deploy`), for a rendering whose consent states go to a bucket of
    their own (defaults) and one whose go to the run store's (minimal-s3).
    """
    tests = ["tests/test_user_tokens_deployed.py", "tests/test_user_token_grants.py"]
    suite = ["uv", "run", "--group", "deploy", "pytest", "-q", "-p", "no:cacheprovider"]

    result = run([*suite, *tests], built)

    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    last = result.stdout.splitlines()[-1]
    assert "skipped" not in last and "failed" not in last, result.stdout[-2000:]
    assert int(re.search(r"(\d+) passed", last).group(1)) >= 28, last


def test_make_test_passes_and_leaves_the_slow_tests_to_make_test_all(built):
    """The quick loop: every test but those that start a process or the S3 server."""
    result = run(["make", "test", "PYTEST_ADDOPTS=-p no:cacheprovider"], built)

    collect = ["uv", "run", "--no-sync", "pytest", "-q", "--collect-only", "-p", "no:cacheprovider"]
    every = run(collect, built)

    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    last = result.stdout.splitlines()[-1]
    assert "failed" not in last and "error" not in last, last
    quick = re.search(r"\d workers \[(\d+) items\]", result.stdout)
    total = re.search(r"(\d+) tests collected", every.stdout)
    assert quick and total, (result.stdout[:2000], every.stdout[-500:])
    assert int(total.group(1)) - int(quick.group(1)) >= 10  # the slow ones, left out


def test_gating_write_document_keeps_the_rehearsal_test_green(built):
    tools = built / "app" / "my_welt_agent" / "yours" / "tools" / "__init__.py"
    rows = tools.read_text()
    if "Row(write_document, ALLOW" not in rows:
        pytest.skip("this rendering has no write_document")
    tools.write_text(rows.replace("Row(write_document, ALLOW", "Row(write_document, ASK"))
    try:
        suite = ["uv", "run", "--no-sync", "pytest", "-q", "-p", "no:cacheprovider"]
        result = run([*suite, "tests/test_serving.py"], built)
    finally:
        tools.write_text(rows)

    assert result.returncode == 0, result.stdout[-3000:]


def test_the_agents_guide_example_passes_ruff_and_runs(built):
    guide = (built / "AGENTS.md").read_text()
    (example,) = re.findall(r"```python\n(.*?)```", guide, re.DOTALL)
    path = built / "tests" / "test_agents_guide_example.py"
    path.write_text(example)
    try:
        checks = [
            ["uv", "run", "--no-sync", "ruff", "check", str(path)],
            ["uv", "run", "--no-sync", "ruff", "format", "--check", str(path)],
            ["uv", "run", "--no-sync", "pytest", "-q", "-p", "no:cacheprovider", str(path)],
        ]
        for command in checks:
            result = run(command, built)
            assert result.returncode == 0, (command, result.stdout[-3000:], result.stderr)
    finally:
        path.unlink()


def test_make_evals_passes_offline_and_writes_its_json(built):
    result = run(["make", "evals"], built)

    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert ", 0 failed," in result.stdout
    assert "Bytecode compiled" not in result.stderr
    assert (built / "evals-results.json").is_file()


def test_a_fresh_install_gets_the_newest_releases(built):
    venv_python = str(built / ".venv" / "bin" / "python")
    listed = run(
        ["uv", "pip", "list", "--python", venv_python, "--outdated", "--format", "json"], built
    )

    assert listed.returncode == 0, listed.stderr
    behind = {entry["name"] for entry in json.loads(listed.stdout)} & set(PINNED)
    assert behind == set(), f"not at the newest release: {behind}"
