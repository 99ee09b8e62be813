"""`make evals`: the agent's behaviours, scored offline and deterministically."""

import json

import pytest

import evals.__main__ as evals_runner
from evals.cases import EVALS


@pytest.fixture(scope="module")
def offline_run(tmp_path_factory):
    """One offline run of every case, as `make evals` does it: exit code, table, JSON."""
    written = tmp_path_factory.mktemp("evals") / "results.json"
    capture = pytest.MonkeyPatch()
    capture.setenv("SESSION_STORAGE_DIR", str(written.parent))
    printed = []
    capture.setattr("builtins.print", lambda *parts, **_: printed.append(" ".join(map(str, parts))))
    try:
        code = evals_runner.main(["--json", str(written)])
    finally:
        capture.undo()
    return code, "\n".join(printed), json.loads(written.read_text())


def test_every_offline_eval_passes_and_prints_a_table(offline_run):
    code, table, _ = offline_run

    assert code == 0, table
    assert ", 0 failed," in table
    for one in EVALS:
        assert one.case.name in table


def test_the_results_are_written_as_json_for_machines(offline_run):
    _, _, results = offline_run

    assert {row["case"] for row in results} == {one.case.name for one in EVALS}
    assert {row["result"] for row in results} <= {"pass", "skipped"}
    assert all(row["reason"] for row in results)


def test_live_evals_are_skipped_with_a_reason_without_credentials(monkeypatch, tmp_path):
    monkeypatch.setenv("MODEL_PROVIDER", "bedrock")
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))

    settings = evals_runner.Settings.from_environment(
        {"MODEL_PROVIDER": "bedrock", "STATE_BUCKET": "offline-test-bucket"}
    )

    assert evals_runner.missing_credentials(settings) == "no AWS credentials for Bedrock"
