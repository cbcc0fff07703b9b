"""A local transformers VLM as judge, served in-process behind the chat-completions interface (an httpx
transport), so caching, re-asks, parsing and cost accounting are exactly those of remote judges.

Selected with `--judge-url local:PATH` where PATH is a saved transformers image-text-to-text model and its
processor (e.g. a Qwen2-VL checkout or Hugging Face cache snapshot). Greedy decoding; one generation at a
time (a lock), since a single local model gains nothing from concurrent calls.
"""
from __future__ import annotations

import base64
import io
import json
import threading
from pathlib import Path

import httpx

from ..models.errors import MissingWeightError
from ..models.provenance import record_loaded

PREFIX = "local:"
BASE_URL = "http://local-vlm/v1"


def local_path(url: str) -> Path | None:
    return Path(url[len(PREFIX):]).expanduser() if url.startswith(PREFIX) else None


def weights_dtype(device: str) -> str:
    """The dtype the local model runs in: bf16 on CUDA, fp32 elsewhere (CPU bf16 matmuls are slow)."""
    return "bfloat16" if device.startswith("cuda") else "float32"


def keyed_version(model_version: str, device: str) -> str:
    """The model version the cache key and the rows use for a local judge: its answers depend on the dtype, so
    a bf16 (CUDA) answer is not reused by an fp32 (CPU) run of the same folder, nor the other way round."""
    return f"{model_version}+{weights_dtype(device)}" if model_version else weights_dtype(device)


class LocalVLMTransport(httpx.BaseTransport):
    def __init__(self, path: str | Path, device: str = "cpu"):
        self.path = Path(path)
        if not (self.path / "config.json").is_file():
            raise MissingWeightError(str(self.path), "a local judge needs a folder with a transformers model and its "
                                     "processor (config.json, weights, processor files)")
        self.device = device
        self._lock = threading.Lock()
        self._loaded = None

    def _load(self):
        if self._loaded is None:
            import torch
            from transformers import AutoModelForImageTextToText, AutoProcessor

            dtype = getattr(torch, weights_dtype(self.device))
            processor = AutoProcessor.from_pretrained(self.path)
            model = AutoModelForImageTextToText.from_pretrained(self.path, dtype=dtype).to(self.device).eval()
            record_loaded(f"judge:{self.path.name}", self.path)
            self._loaded = (processor, model)
        return self._loaded

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        try:
            body = json.loads(request.read())
            with self._lock:
                text, n_in, n_out = self._generate(body)
        except (ValueError, KeyError, TypeError, RuntimeError) as exc:  # a bad request or model error: not retried
            return httpx.Response(400, json={"error": f"local judge: {type(exc).__name__}: {exc}"})
        return httpx.Response(200, json={"object": "chat.completion", "model": body.get("model"),
                                         "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
                                         "usage": {"prompt_tokens": n_in, "completion_tokens": n_out}})

    def _generate(self, body: dict) -> tuple[str, int, int]:
        import torch

        processor, model = self._load()
        inputs = processor.apply_chat_template(_hf_messages(body["messages"]), add_generation_prompt=True, tokenize=True,
                                               return_dict=True, return_tensors="pt").to(self.device)
        torch.manual_seed(int(body.get("seed") or 0))
        with torch.inference_mode():
            limit = body.get("max_tokens") or body.get("max_completion_tokens") or 256  # the latter: GenExam's script
            out = model.generate(**inputs, max_new_tokens=int(limit), do_sample=False)
        new = out[:, inputs["input_ids"].shape[1]:]
        text = processor.batch_decode(new, skip_special_tokens=True)[0]
        return text, int(inputs["input_ids"].shape[1]), int(new.shape[1])


def _hf_messages(messages: list[dict]) -> list[dict]:
    """OpenAI content parts -> transformers chat parts (data-URL images decoded to PIL)."""
    from PIL import Image

    out = []
    for m in messages:
        content = m["content"]
        if isinstance(content, str):
            parts = [{"type": "text", "text": content}]
        else:
            parts = []
            for p in content:
                if p["type"] == "text":
                    parts.append({"type": "text", "text": p["text"]})
                elif p["type"] == "image_url":
                    data = base64.b64decode(p["image_url"]["url"].split(",", 1)[1])
                    parts.append({"type": "image", "image": Image.open(io.BytesIO(data)).convert("RGB")})
        out.append({"role": m["role"], "content": parts})
    return out
