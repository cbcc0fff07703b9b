"""Tiny random-init checkpoints of the CSE models (CLIP, DINOv2, GroundingDINO, SAM), saved with
`save_pretrained` so tests and CPU benchmarks exercise the real loading and inference code offline.

Same architectures and processors as the catalogued checkpoints, a few thousand parameters each; the
tokenizers are built from a small word list (no download). Their outputs are meaningless — they prove
plumbing, shapes, batching and determinism, never accuracy.
"""
from __future__ import annotations

from pathlib import Path

WORDS = ["a", "the", "red", "fox", "cat", "dog", "ball", "person", "in", "on", "runs", "sleeps", "jumps", "snow",
         "den", "tree", "wakes", "up", "hunts", "subject", "panel", "storyboard", "of", "and", "with", "under"]


def save_tiny_clip(path: Path, seed: int = 0) -> Path:
    import torch
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPProcessor, CLIPTokenizerFast

    vocab = {"<|startoftext|>": 0, "<|endoftext|>": 1}
    for ch in "abcdefghijklmnopqrstuvwxyz0123456789.,'!?-":
        vocab[ch] = len(vocab)
        vocab[ch + "</w>"] = len(vocab)
    tokenizer = CLIPTokenizerFast(vocab=vocab, merges=[])     # character-level BPE: no merges needed
    config = CLIPConfig(
        text_config=dict(vocab_size=len(vocab), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=2, max_position_embeddings=40, bos_token_id=0, eos_token_id=1, pad_token_id=1),
        vision_config=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                           image_size=32, patch_size=8),
        projection_dim=16)
    torch.manual_seed(seed)
    CLIPModel(config).save_pretrained(path)
    image_processor = CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32})
    CLIPProcessor(image_processor=image_processor, tokenizer=tokenizer).save_pretrained(path)
    return Path(path)


def save_tiny_dinov2(path: Path, seed: int = 0) -> Path:
    import torch
    from transformers import BitImageProcessor, Dinov2Config, Dinov2Model

    torch.manual_seed(seed)
    Dinov2Model(Dinov2Config(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                             image_size=32, patch_size=8)).save_pretrained(path)
    BitImageProcessor(size={"shortest_edge": 36}, crop_size={"height": 32, "width": 32}, do_center_crop=True,
                      image_mean=[0.485, 0.456, 0.406], image_std=[0.229, 0.224, 0.225]).save_pretrained(path)
    return Path(path)


def save_tiny_grounding_dino(path: Path, seed: int = 0) -> Path:
    import torch
    from transformers import BertTokenizerFast, GroundingDinoConfig, GroundingDinoForObjectDetection, GroundingDinoImageProcessor, GroundingDinoProcessor

    vocab = {tok: i for i, tok in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "."] + WORDS)}
    tokenizer = BertTokenizerFast(vocab=vocab, do_lower_case=True)
    config = GroundingDinoConfig(
        backbone_config=dict(model_type="swin", embed_dim=16, depths=[1, 1, 1, 1], num_heads=[1, 1, 1, 1],
                             window_size=4, image_size=64, out_indices=[2, 3, 4]),
        text_config=dict(model_type="bert", vocab_size=len(vocab), hidden_size=32, num_hidden_layers=1,
                         num_attention_heads=2, intermediate_size=64, max_position_embeddings=64),
        num_queries=30, encoder_layers=1, decoder_layers=2, encoder_ffn_dim=32, decoder_ffn_dim=32, d_model=32,
        encoder_attention_heads=2, decoder_attention_heads=2, encoder_n_points=1, decoder_n_points=1, max_text_len=32)
    torch.manual_seed(seed)
    GroundingDinoForObjectDetection(config).save_pretrained(path)
    image_processor = GroundingDinoImageProcessor(size={"shortest_edge": 96, "longest_edge": 128})
    GroundingDinoProcessor(image_processor=image_processor, tokenizer=tokenizer).save_pretrained(path)
    return Path(path)


def save_tiny_sam(path: Path, seed: int = 0, image_size: int = 256, hidden_size: int = 32, layers: int = 2) -> Path:
    import torch
    from transformers import SamConfig, SamImageProcessor, SamModel, SamProcessor

    vision = dict(hidden_size=hidden_size, output_channels=16, num_hidden_layers=layers, num_attention_heads=2,
                  image_size=image_size, patch_size=16, window_size=4, global_attn_indexes=[layers - 1],
                  num_pos_feats=8, mlp_dim=2 * hidden_size)
    config = SamConfig(vision_config=vision,
                       prompt_encoder_config=dict(hidden_size=16, image_size=image_size, patch_size=16, mask_input_channels=4),
                       mask_decoder_config=dict(hidden_size=16, mlp_dim=32, num_hidden_layers=2, num_attention_heads=2,
                                                iou_head_hidden_dim=16))
    torch.manual_seed(seed)
    SamModel(config).save_pretrained(path)
    image_processor = SamImageProcessor(size={"longest_edge": image_size}, pad_size={"height": image_size, "width": image_size})
    SamProcessor(image_processor=image_processor).save_pretrained(path)
    return Path(path)


def save_tiny_cse_models(root: Path, seed: int = 0) -> dict[str, str]:
    """All four under ROOT; returns {catalogue name: folder} ready for `--model-path NAME=DIR`."""
    root = Path(root)
    return {"clip-vit-large-patch14": str(save_tiny_clip(root / "clip", seed)),
            "dinov2-large": str(save_tiny_dinov2(root / "dinov2", seed)),
            "grounding-dino-tiny": str(save_tiny_grounding_dino(root / "grounding-dino", seed)),
            "sam-vit-huge": str(save_tiny_sam(root / "sam", seed))}
