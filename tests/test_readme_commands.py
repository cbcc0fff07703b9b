"""The README's two set-up commands stay true: CI runs the test command verbatim, and the main command's
`vistar score` arguments point at files shipped in the repository."""
from __future__ import annotations

import re
import shlex
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def setup_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text()
    section = re.search(r"^## Set-up\n(.*?)(?=^## )", readme, re.S | re.M)
    assert section, "README has no '## Set-up' section"
    blocks = re.findall(r"```bash\n(.*?)```", section.group(1), re.S)
    assert len(blocks) >= 2, "Set-up needs two bash blocks: the main job and the tests"
    return [b.strip() for b in blocks[:2]]


def test_ci_runs_the_readme_test_command_verbatim():
    test_command = setup_commands()[1]
    ci_lines = [ln.strip() for ln in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert test_command in ci_lines


def test_main_command_scores_shipped_files():
    words = shlex.split(setup_commands()[0])
    i = words.index("vistar")
    assert words[i + 1] == "score"
    args = words[i + 2:words.index("&&", i) if "&&" in words[i:] else None]
    images, prompts = args[0], args[args.index("--prompts") + 1]
    assert (ROOT / images).is_dir() and any((ROOT / images).rglob("*.png")), images
    assert (ROOT / prompts).is_file(), prompts
    assert "--out" in args
