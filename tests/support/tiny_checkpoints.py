"""Tiny random-initialised checkpoints with the real architectures (nothing downloaded), saved the way the real
weights are, so the real loading paths run on them. Needs torch, transformers and ultralytics."""
from __future__ import annotations

from pathlib import Path


def _deterministic():
    import torch

    torch.manual_seed(0)


def save_tiny_dpt(folder: Path) -> Path:
    """A DPT-hybrid (BiT backbone) with the real architecture, shrunk, saved with save_pretrained."""
    from transformers import BitConfig, DPTConfig, DPTForDepthEstimation

    _deterministic()
    backbone = BitConfig(global_padding="same", layer_type="bottleneck", depths=[1, 1, 1], hidden_sizes=[16, 32, 64],
                         embedding_size=8, out_features=["stage1", "stage2", "stage3"], num_groups=4)
    config = DPTConfig(is_hybrid=True, hidden_size=32, num_hidden_layers=4, num_attention_heads=2, intermediate_size=64,
                       image_size=64, patch_size=16, backbone_out_indices=[0, 1, 2, 3], neck_hidden_sizes=[16, 32, 32, 32],
                       fusion_hidden_size=16, backbone_config=backbone, backbone_featmap_shape=[1, 64, 4, 4],
                       head_in_index=-1)
    DPTForDepthEstimation(config).save_pretrained(folder)
    return folder


def save_tiny_yolo_seg(folder: Path) -> Path:
    """YOLOv8-seg built from ultralytics' own YAML with a tiny width scale, random weights, saved to a .pt."""
    import ultralytics
    import yaml
    from ultralytics import YOLO

    _deterministic()
    cfg = yaml.safe_load((Path(ultralytics.__file__).parent / "cfg/models/v8/yolov8-seg.yaml").read_text())
    cfg.update(nc=3, scales={"t": [0.33, 0.0625, 64]}, scale="t")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tiny-seg.yaml").write_text(yaml.safe_dump(cfg))
    YOLO(str(folder / "tiny-seg.yaml"), task="segment").save(str(folder / "tiny-seg.pt"))
    (folder / "tiny-seg.yaml").unlink()
    return folder / "tiny-seg.pt"
