"""Local transformers judge: a tiny random-init Qwen2-VL (real architecture, saved with save_pretrained, loaded
through the real path) answers through the same client, cache and re-ask logic as remote judges."""
from __future__ import annotations

from dataclasses import replace

import pytest

from tests.support.vlm_helpers import RED, fast_config, solid
from vistar.models.errors import MissingWeightError
from vistar.vlm.cache import cache_key
from vistar.vlm.hwpq import online
from vistar.vlm.images import png_bytes
from vistar.vlm.judge import Judge
from vistar.vlm.types import JudgeRequest

torch = pytest.importorskip("torch", reason="torch is needed for the local transformers judge")
transformers = pytest.importorskip("transformers", reason="transformers is needed for the local transformers judge")

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>"]
TEMPLATE = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{% if m['content'] is string %}{{ m['content'] }}"
            "{% else %}{% for p in m['content'] %}{% if p['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
            "{% else %}{{ p['text'] }}{% endif %}{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
            "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


@pytest.fixture(scope="module")
def tiny_vlm(tmp_path_factory):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(['Is the image red? yes no {"answer": true} system user assistant'] * 3,
                            trainers.BpeTrainer(vocab_size=300, special_tokens=SPECIAL, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>")
    processor = transformers.Qwen2VLProcessor(
        image_processor=transformers.Qwen2VLImageProcessor(min_pixels=56 * 56, max_pixels=56 * 56 * 4),
        tokenizer=tokenizer, video_processor=transformers.Qwen2VLVideoProcessor(), chat_template=TEMPLATE)
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in SPECIAL}
    config = transformers.Qwen2VLConfig(
        text_config=dict(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=1, bos_token_id=ids["<|endoftext|>"], eos_token_id=ids["<|im_end|>"],
                         rope_scaling={"type": "mrope", "mrope_section": [2, 3, 3]}),
        vision_config=dict(depth=1, embed_dim=32, hidden_size=32, num_heads=2, mlp_ratio=2, patch_size=14,
                           spatial_merge_size=2, temporal_patch_size=2),
        image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"], vision_end_token_id=ids["<|vision_end|>"],
        bos_token_id=ids["<|endoftext|>"], eos_token_id=ids["<|im_end|>"])
    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("tiny-qwen2-vl")
    transformers.Qwen2VLForConditionalGeneration(config).save_pretrained(folder)
    processor.save_pretrained(folder)
    return folder


def _request(vote=0) -> JudgeRequest:
    return JudgeRequest("test@1", "q", "t", "Is the image red?", "", (png_bytes(solid(RED, 64)),), "sha-red", vote, max_tokens=6)


def test_local_model_answers_deterministically_and_is_cached(tiny_vlm, tmp_path):
    judge = Judge(fast_config(f"local:{tiny_vlm}", tmp_path, model="tiny-qwen2-vl"))
    first = judge.ask([(_request(), str)])[0]
    assert first.ok and isinstance(first.text, str) and first.prompt_tokens > 10 and 0 < first.completion_tokens <= 6
    again = Judge(fast_config(f"local:{tiny_vlm}", tmp_path / "other", model="tiny-qwen2-vl")).ask([(_request(), str)])[0]
    assert again.text == first.text and not again.cached  # greedy decoding: same answer from a fresh cache
    assert judge.ask([(_request(), str)])[0].cached


def test_unparseable_local_answers_are_reasked_then_failed(tiny_vlm, tmp_path):
    reply = Judge(fast_config(f"local:{tiny_vlm}", tmp_path, model="tiny-qwen2-vl", max_reasks=1)).ask([(_request(), online.parse_single)])[0]
    assert not reply.ok and reply.error.startswith("malformed reply after 2 attempt(s)") and reply.attempts == 2


def test_missing_local_model_is_a_clear_skip(tmp_path):
    with pytest.raises(MissingWeightError, match="transformers model"):
        Judge(fast_config(f"local:{tmp_path / 'nothing'}", tmp_path, model="m"))


def test_the_local_judges_dtype_is_part_of_its_cache_key_and_identity(tmp_path):
    """bf16 on CUDA and fp32 on CPU answer differently: a cached fp32 answer is not a bf16 run's answer."""
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text("{}")  # never loaded: the answer below comes from the cache
    cfg = fast_config(f"local:{folder}", tmp_path, model="tiny", model_version="v1")
    cpu = Judge(cfg, device="cpu")
    cpu.cache.put(cache_key(cpu.cfg, _request()), cpu.cfg, _request(), '{"answer": true}', True, 1, 1)
    cpu.close()
    on_cpu, on_gpu = (Judge(replace(cfg, cache_only=True), device=d) for d in ("cpu", "cuda:0"))
    assert (on_cpu.identity, on_gpu.identity) == ("tiny:v1+float32", "tiny:v1+bfloat16")
    assert on_cpu.ask([(_request(), online.parse_single)])[0].parsed is True
    assert not on_gpu.ask([(_request(), online.parse_single)])[0].ok
