"""Questionnaires on disk: `<dir>/<prompt fingerprint>.json`, one per prompt, written once and reused
identically; users may edit them or write them by hand (validated strictly when read)."""
from __future__ import annotations

import json
from pathlib import Path

from ...atomic import write_text_atomic
from ...models.catalog import vistar_home
from ...prompts_dsl.model import Prompt
from ..errors import DataError
from .questionnaire import Questionnaire, validate


def default_dir() -> Path:
    return vistar_home() / "hwpq"


class QuestionnaireStore:
    def __init__(self, folder: str | Path | None = None):
        self.dir = Path(folder).expanduser() if folder else default_dir()

    def path(self, prompt: Prompt) -> Path:
        return self.dir / f"{prompt.fingerprint}.json"

    def get(self, prompt: Prompt) -> Questionnaire | None:
        """The prompt's questionnaire; None when absent; DataError when present but invalid."""
        path = self.path(prompt)
        if not path.is_file():
            return None
        return load_file(path)

    def put(self, q: Questionnaire, prompt: Prompt) -> Path:
        self.dir.mkdir(parents=True, exist_ok=True)
        path = self.path(prompt)
        write_text_atomic(path, json.dumps(q.to_json(), indent=2, ensure_ascii=False) + "\n")
        return path


def load_file(path: str | Path) -> Questionnaire:
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: cannot read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg}") from None
    return validate(data, str(path))
