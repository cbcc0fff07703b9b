"""`vistar gc fit-padim REF_IMAGES --out FILE`: fit GC's PaDiM reference statistics (cue 6) on images that
show what "geometrically normal" looks like for your domain; point `features.padim.stats` at the file."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import numpy as np
import typer

from ..engine.images import IMAGE_EXTS, ImageError, load_rgb
from ..models import MissingWeightError
from ..runtime.device import resolve_device
from .common import ModelPathOpt, fail, out, parse_model_paths, say
from .exit_codes import os_error_code
from .style import App

app = App(no_args_is_help=True, help="Geometric consistency (GC) tools.")


@app.command("fit-padim")
def fit_padim(
    ref_images: Path = typer.Argument(..., exists=True, file_okay=False, help="Folder of reference images (recursive)"),
    out_file: Path = typer.Option(..., "--out", help="Statistics file to write (.npz)"),
    model_path: Optional[list[str]] = ModelPathOpt,
    device: str = typer.Option("cpu", "--device", help="cpu, cuda, cuda:N or auto: where the backbone runs"),
    backbone_model: str = typer.Option("efficientnet-lite0", "--backbone",
                                       help="Catalogue name of the ImageNet backbone: efficientnet-lite0 or resnet18-imagenet"),
    input_size: int = typer.Option(224, "--input-size", min=32, help="Backbone input side (pixels)"),
    channels: int = typer.Option(100, "--channels", min=1, help="Random feature channels kept (of 176 for Lite0, 448 for ResNet-18)"),
    pool: int = typer.Option(2, "--pool", min=1, help="Average-pool factor on the feature grid"),
    seed: int = typer.Option(0, "--seed", help="Seed of the channel subset"),
    batch_size: int = typer.Option(16, "--batch-size", min=1, help="Images per backbone call"),
) -> None:
    """Per-position Gaussians of backbone patch features, stored with a content hash and the backbone's sha256."""
    from ..features.padim import CHANNELS, BackboneConfig, fit_stats, load_backbone, save_stats

    if backbone_model not in CHANNELS:
        fail(f"--backbone {backbone_model}: not a PaDiM backbone (known: {', '.join(sorted(CHANNELS))})")
    try:  # as `vistar score` does: a GPU the machine lacks is refused naming what was found, before any work
        used = resolve_device(device)
    except ValueError as exc:
        fail(str(exc))
    if not out_file.parent.is_dir():
        fail(f"--out {out_file}: folder {out_file.parent} does not exist")

    files = sorted(p for p in ref_images.rglob("*") if p.suffix.lower() in IMAGE_EXTS)
    images = []
    for file in files:
        try:
            images.append(load_rgb(file))
        except ImageError as exc:
            say(f"skipped: {file}: {exc}", "yellow")
    if len(images) < 3:
        fail(f"{ref_images}: need at least 3 readable reference images, found {len(images)}")
    try:
        backbone = load_backbone(parse_model_paths(model_path), BackboneConfig(input_size, channels, pool, seed, backbone_model), used)
    except MissingWeightError as exc:
        fail(str(exc))
    feats = np.concatenate([backbone(images[i:i + batch_size]) for i in range(0, len(images), batch_size)])
    stats = fit_stats(feats, backbone)
    try:
        digest = save_stats(stats, out_file)
    except OSError as exc:
        fail(str(exc), os_error_code(exc))
    say(f"wrote {out_file}: {len(images)} images, grid {feats.shape[2]}x{feats.shape[3]}, "
        f"{feats.shape[1]} channels, s_ref {stats.meta['s_ref']:.3f}, hash {digest}", to=out)
