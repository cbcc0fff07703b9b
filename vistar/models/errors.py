"""Errors of the model layer that the engine turns into `skipped` rows rather than crashes."""
from __future__ import annotations


class MissingWeightError(RuntimeError):
    """A pretrained weight is not on disk; the message names it and the command that fetches it."""

    def __init__(self, name: str, hint: str | None = None):
        self.name = name
        hint = hint or f"run `vistar models fetch {name}` or pass `--model-path {name}=PATH`"
        super().__init__(f"missing model weight '{name}': {hint}")


# Optional third-party packages that stages import lazily, and the install command of each: a user who installed
# only the core (or `vistar[all]`, which cannot carry mediapipe's --no-deps install) gets skipped rows naming it.
INSTALL_COMMANDS = {
    "mediapipe": "pip install 'vistar[pose]' && pip install --no-deps mediapipe==0.10.21",
    "torch": "pip install 'vistar[cv]'", "torchvision": "pip install 'vistar[cv]'",
    "transformers": "pip install 'vistar[cv]'", "ultralytics": "pip install 'vistar[cv]'",
    "cv2": "pip install 'vistar[cv]'", "h5py": "pip install 'vistar[cv]'",
    "numba": "pip install 'vistar[kernels]'", "openvino": "pip install 'vistar[openvino]'",
    "httpx": "pip install 'vistar[vlm]'", "optuna": "pip install 'vistar[calibration]'",
}


class MissingDependencyError(MissingWeightError):
    """An optional package a stage needs is not installed. A subclass of the missing weight because the engine
    treats both alike (a skipped row whose reason is the command that fixes it), not because it is a weight."""

    def __init__(self, package: str):
        self.name = package
        RuntimeError.__init__(self, f"missing Python package '{package}': {INSTALL_COMMANDS[package]}")


def install_hint(exc: ImportError) -> str:
    """How to get what a failed import lacked: the command of an optional extra, else which module to install
    (a plain ImportError, a name a package no longer has, says nothing: reinstalling that package is the fix)."""
    top = exc.name.split(".")[0] if isinstance(exc, ModuleNotFoundError) and exc.name else None
    if top is None:
        return ""
    if top in INSTALL_COMMANDS:
        return f": install it with `{INSTALL_COMMANDS[top]}`"
    return f": install the package that provides '{exc.name}' into this Python environment"


def as_missing_dependency(exc: BaseException) -> MissingDependencyError | None:
    """EXC as a missing optional dependency, or None when it is anything else (a missing vistar module is a bug,
    not a skip)."""
    name = getattr(exc, "name", None) if isinstance(exc, ModuleNotFoundError) else None
    top = name.split(".")[0] if name else None
    return MissingDependencyError(top) if top in INSTALL_COMMANDS else None
