"""`make update` first checks that copier can find the template again."""

import shutil
import subprocess

from conftest import PROJECT

CHECK = PROJECT / "scripts" / "check-source.sh"


def check_with_source(tmp_path, source: str) -> subprocess.CompletedProcess:
    shutil.copy(PROJECT / ".copier-answers.yml", tmp_path / ".copier-answers.yml")
    answers = (tmp_path / ".copier-answers.yml").read_text()
    kept = [line for line in answers.splitlines() if not line.startswith("_src_path:")]
    (tmp_path / ".copier-answers.yml").write_text("\n".join([*kept, f"_src_path: {source}\n"]))
    return subprocess.run(["sh", str(CHECK)], cwd=tmp_path, capture_output=True, text=True)


def test_a_copy_made_from_a_relative_path_is_told_how_to_update(tmp_path):
    checked = check_with_source(tmp_path, ".")

    assert checked.returncode == 1
    assert "relative path ('.')" in checked.stderr and "_src_path" in checked.stderr


def test_an_absolute_path_or_a_git_url_goes_on(tmp_path):
    for source in ("/srv/templates/welt", "https://example.com/t.git", "gh:acme/welt-template"):
        assert check_with_source(tmp_path, source).returncode == 0, source
