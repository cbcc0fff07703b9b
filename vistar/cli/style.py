"""How `--help` reads: usage lines name the arguments (`vistar score [OPTIONS] IMAGES`, not typer's `{images}`)
and flags show no `<bool>` type; how a stopped command exits (128 + the signal's number). Every command group is
an `App`, so every command gets this."""
from __future__ import annotations

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup

from .common import discard_stdout, fail
from .exit_codes import PIPE_CLOSED, ExitCode, interrupted_code, is_system_failure


class Command(TyperCommand):
    def get_params(self, ctx):
        params = super().get_params(ctx)
        for param in params:
            if getattr(param, "is_flag", False) and param.metavar is None:
                param.metavar = ""  # a flag takes no value: no type column
        return params

    def collect_usage_pieces(self, ctx) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if isinstance(param, TyperArgument):
                name = param.metavar or param.name.upper()
                if param.nargs != 1 and not name.endswith("..."):
                    name += "..."
                pieces.append(name if param.required else f"[{name}]")
        return pieces


class Group(TyperGroup):
    """Ctrl-C (SIGINT) exits 130 and SIGTERM 143, as a shell reports a process that signal ended (typer turns
    every interruption into 130); `vistar score` turns SIGTERM into an interruption so run.json can say so.
    Output into a pipe its reader closed exits 141 (128 + SIGPIPE, what a shell reports for `yes | head -1`'s
    `yes`) with nothing on stderr; a failed read or write that no command handled exits 5 with its message."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt as exc:
            raise typer.Exit(interrupted_code(exc)) from exc
        except BrokenPipeError as exc:  # `vistar suite show core | head -1`: the reader has all it wanted
            discard_stdout()
            raise typer.Exit(PIPE_CLOSED) from exc
        except OSError as exc:  # a full disk or a permission no command caught: exit 5 naming the file, no traceback
            if not is_system_failure(exc):
                raise
            fail(str(exc), ExitCode.IO_FAILURE)


class App(typer.Typer):
    """typer.Typer whose commands use `Command`, and so do those of every group added to it."""

    def __init__(self, *args, cls=None, **kwargs):
        super().__init__(*args, cls=cls or Group, **kwargs)

    def command(self, *args, cls=None, **kwargs):
        return super().command(*args, cls=cls or Command, **kwargs)

    def add_typer(self, typer_instance: typer.Typer, **kwargs) -> None:
        for info in typer_instance.registered_commands:  # a group written as a plain typer.Typer too
            if info.cls in (None, TyperCommand):
                info.cls = Command
        super().add_typer(typer_instance, **kwargs)
