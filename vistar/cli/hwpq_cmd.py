"""`vistar hwpq`: write HWPQ questionnaires once per prompt (offline phase) and check hand-edited ones."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ..ontology import Ontology
from ..prompts_dsl.validate import with_ontology_codes
from . import judge_options as judge_cli
from .common import fail, out, parse_angles, say
from .exit_codes import os_error_code
from .style import App

app = App(no_args_is_help=True, help="HWPQ questionnaires for the abstract angles SF, CUL, MA.")


@app.command("generate")
def generate(
    prompts: Path = typer.Argument(..., exists=True, dir_okay=False, help=".vistar or .jsonl prompt file"),
    judge_url: Optional[str] = judge_cli.JudgeUrlOpt,
    judge_model: Optional[str] = judge_cli.JudgeModelOpt,
    judge_key_env: Optional[str] = judge_cli.JudgeKeyEnvOpt,
    judge_config: Optional[Path] = judge_cli.JudgeConfigOpt,
    out_dir: Optional[Path] = judge_cli.HwpqDirOpt,
    angles: str = typer.Option("SF,CUL,MA", "--angles", help="Angles whose prompts get a questionnaire"),
    force: bool = typer.Option(False, "--force", help="Rewrite questionnaires that already exist"),
) -> None:
    """Ask the LLM once per prompt, validate and safely repair, store by prompt fingerprint."""
    from ..prompts_dsl import read_prompts
    from ..vlm.config import config_from_options
    from ..vlm.hwpq import generate as gen
    from ..vlm.hwpq.store import QuestionnaireStore
    from ..vlm.judge import Judge

    options = {k: v for k, v in {"judge_url": judge_url, "judge_model": judge_model, "judge_key_env": judge_key_env,
                                 "judge_config": str(judge_config) if judge_config else None}.items() if v}
    try:
        cfg = config_from_options(options)
    except OSError as exc:
        fail(str(exc), os_error_code(exc))
    except ValueError as exc:
        fail(str(exc))
    if cfg is None:
        fail("no judge configured: pass --judge-url URL --judge-model MODEL (API key from the variable named by --judge-key-env)")
    onto = Ontology.load()
    wanted = set(parse_angles(angles, onto.angles))  # checked, case-insensitive, before the judge is called
    parsed = read_prompts(prompts)
    for err in parsed.errors:
        say(f"prompt_error: {err}", "yellow")
    chosen = [p for p in (with_ontology_codes(q, onto) for q in parsed.prompts) if p.angle in wanted]
    store = QuestionnaireStore(out_dir)
    todo = [p for p in chosen if force or not store.path(p).is_file()]
    kept = len(chosen) - len(todo)
    judge = Judge(cfg)
    try:
        replies = judge.ask([(gen.request(p), gen.parse) for p in todo], bill=[("", p.fingerprint) for p in todo])
    finally:
        judge.close()
    written = failed = repaired = 0
    for prompt, reply in zip(todo, replies):
        if not reply.ok:
            failed += 1
            say(f"failed: {prompt.id}: {reply.error}", "red")
            continue
        q = gen.finish(gen.from_reply(reply.parsed), prompt, cfg.model)
        path = store.put(q, prompt)
        written += 1
        if q.repairs:
            repaired += 1
            say(f"repaired: {prompt.id} ({path.name}): " + "; ".join(q.repairs), "yellow")
    out.print(f"questionnaires in {store.dir}: {written} written ({repaired} repaired), {kept} kept as they were, "
              f"{failed} failed", highlight=False)
    for line in judge.ledger.lines():
        out.print(line, highlight=False)
    if failed:
        raise typer.Exit(1)


@app.command("validate")
def validate(
    paths: list[Path] = typer.Argument(..., exists=True, help="Questionnaire JSON files or folders of them"),
    fix: bool = typer.Option(False, "--fix", help="Apply the safe repairs in place"),
) -> None:
    """Check hand-written or edited questionnaires against the schema (docs/hwpq.md)."""
    import json

    from ..vlm.errors import DataError
    from ..vlm.hwpq.questionnaire import repair

    files = [f for p in paths for f in (sorted(p.glob("*.json")) if p.is_dir() else [p])]
    bad = 0
    for f in files:
        try:
            data = json.loads(f.read_text(encoding="utf-8"))
            q, repairs = repair(data, str(f))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, DataError) as exc:
            bad += 1
            say(f"invalid: {f}: {exc}", "red")
            continue
        if not repairs:
            continue
        if fix:
            f.write_text(json.dumps({**data, **q.to_json(), "repairs": list(q.repairs)}, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
            say(f"repaired: {f}: " + "; ".join(repairs), "yellow")
        else:
            bad += 1
            say(f"needs repair: {f}: " + "; ".join(repairs) + " (run with --fix)", "yellow")
    out.print(f"{len(files)} questionnaire(s) checked, {bad} with problems", highlight=False)
    if bad:
        raise typer.Exit(1)
