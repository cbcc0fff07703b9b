"""`vistar hwpq`: write HWPQ questionnaires once per prompt (offline phase) and check hand-edited ones."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ..vlm import cli_support as judge_cli
from .style import App
from .common import console, fail, out

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
    except (ValueError, OSError) as exc:
        fail(str(exc))
    if cfg is None:
        fail("no judge configured: pass --judge-url URL --judge-model MODEL (API key from the variable named by --judge-key-env)")
    parsed = read_prompts(prompts)
    for err in parsed.errors:
        console.print(f"[yellow]prompt_error[/]: {err}", highlight=False)
    wanted = {a.strip() for a in angles.split(",") if a.strip()}
    store = QuestionnaireStore(out_dir)
    todo = [p for p in parsed.prompts if p.angle in wanted and (force or not store.path(p).is_file())]
    kept = sum(1 for p in parsed.prompts if p.angle in wanted) - len(todo)
    judge = Judge(cfg)
    try:
        replies = judge.ask([(gen.request(p), gen.parse) for p in todo], bill=[("", p.fingerprint) for p in todo])
    finally:
        judge.close()
    written = failed = repaired = 0
    for prompt, reply in zip(todo, replies):
        if not reply.ok:
            failed += 1
            console.print(f"[red]failed[/] {prompt.id}: {reply.error}", highlight=False)
            continue
        q = gen.finish(gen.from_reply(reply.parsed), prompt, cfg.model)
        path = store.put(q, prompt)
        written += 1
        if q.repairs:
            repaired += 1
            console.print(f"[yellow]repaired[/] {prompt.id} ({path.name}): " + "; ".join(q.repairs), highlight=False)
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
            console.print(f"[red]invalid[/] {f}: {exc}", highlight=False)
            continue
        if not repairs:
            continue
        if fix:
            f.write_text(json.dumps({**data, **q.to_json(), "repairs": list(q.repairs)}, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
            console.print(f"[yellow]repaired[/] {f}: " + "; ".join(repairs), highlight=False)
        else:
            bad += 1
            console.print(f"[yellow]needs repair[/] {f}: " + "; ".join(repairs) + " (run with --fix)", highlight=False)
    out.print(f"{len(files)} questionnaire(s) checked, {bad} with problems", highlight=False)
    if bad:
        raise typer.Exit(1)
