"""Wall time of `copier copy --defaults` for this template, against a one-file template.

The one-file template is copier's own floor (start-up, reading copier.yml,
git), so the ratio shows what this template's size and questions add.

    uv run python bench/copy_time.py [runs] [--smoke]   # default 5; 1 with --smoke
"""

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _project import TEMPLATE, arguments, median


def one_file_template() -> Path:
    root = Path(tempfile.mkdtemp(prefix="bench-floor-"))
    (root / "copier.yml").write_text("name:\n  type: str\n  default: x\n")
    (root / "README.md.jinja").write_text("# {{ name }}\n")
    for command in (["git", "init", "-q"], ["git", "add", "-A"]):
        subprocess.run(command, cwd=root, check=True)
    subprocess.run(
        [
            "git",
            "-c",
            "user.name=bench",
            "-c",
            "user.email=bench@example.invalid",
            "commit",
            "-qm",
            "x",
        ],
        cwd=root,
        check=True,
    )
    return root


def copy_seconds(template: Path) -> float:
    destination = Path(tempfile.mkdtemp(prefix="bench-copy-")) / "project"
    start = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "copier",
            "copy",
            "--defaults",
            "--quiet",
            "--vcs-ref",
            "HEAD",
            str(template),
            str(destination),
        ],
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - start


def main(runs: int) -> None:
    floor = one_file_template()
    ours, baseline = [], []
    for _ in range(runs):
        ours.append(copy_seconds(TEMPLATE))
        baseline.append(copy_seconds(floor))
    t, f = median(ours), median(baseline)
    print(f"copier copy --defaults, median of {runs}: this template {t:.3f}s, one-file {f:.3f}s")
    print(f"ratio this/one-file: {t / f:.2f}")


if __name__ == "__main__":
    main(arguments(__doc__, {"runs": (5, 1)}).runs)
