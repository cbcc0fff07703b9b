"""The judge's command-line options, shared by `vistar score` and `vistar hwpq generate` (the judge layer turns
their values into run options: `vistar.vlm.suite_run.judge_options`)."""
from __future__ import annotations

import typer

from ..engine import registry
from ..suites.catalog import builtin_suites

JudgeUrlOpt = typer.Option(None, "--judge-url", help="OpenAI-compatible base URL of the VLM judge, e.g. https://api.openai.com/v1")
JudgeModelOpt = typer.Option(None, "--judge-model", help="Judge model id, e.g. gpt-4o-2024-08-06")
JudgeKeyEnvOpt = typer.Option(None, "--judge-key-env", help="Name of the environment variable holding the judge API key")
JudgeModeOpt = typer.Option(None, "--judge-mode", help="HWPQ: per-question (paper) or batched (one call per vote)")
JudgeConfigOpt = typer.Option(None, "--judge-config", exists=True, dir_okay=False, help="YAML judge settings (docs/judge.md)")
JudgeCacheOnlyOpt = typer.Option(False, "--judge-cache-only", help="Rebuild judge scores from the judge cache without calling the judge")
HwpqDirOpt = typer.Option(None, "--hwpq-dir", file_okay=False, help="Folder of HWPQ questionnaires (default $VISTAR_HOME/hwpq)")
SuiteOpt = typer.Option(None, "--suite", help=f"A shipped suite ({', '.join(builtin_suites())}) or a sibling "
                        f"protocol: {', '.join(registry.PROTOCOLS)}")
DataDirOpt = typer.Option(None, "--data-dir", exists=True, file_okay=False, help="The protocol's public data folder (or a folder containing it)")
UpstreamOpt = typer.Option(None, "--upstream", exists=True, file_okay=False,
                           help="With --suite: judge with the benchmark's own prompts and rules, read from this checkout "
                                "of its repository (`vistar upstream fetch NAME`); numbers comparable with published tables")
