"""The two inputs of a run, written by hand: a solid-colour image file and a prompt file of DSL lines."""
from pathlib import Path

from PIL import Image


def png(path: Path, colour=(10, 20, 30), size=(16, 16)) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, colour).save(path)
    return path


def prompts(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
