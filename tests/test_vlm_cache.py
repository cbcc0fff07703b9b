"""Judge cache and cost ledger: hits skip the judge, failures are never cached, every key part matters,
cache-only runs never call, prices come from a user-editable table."""
from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from tests.support.vlm_helpers import BLUE, RED, fast_config, is_it_red, solid
from vistar.vlm.cache import JudgeCache, cache_key, legacy_key
from vistar.vlm.config import JudgeConfig, config_from_options
from vistar.vlm.errors import ReplyFormatError
from vistar.vlm.hwpq import generate, online
from vistar.vlm.hwpq.questionnaire import Level, Pair, Questionnaire
from vistar.vlm.hwpq.stage import _calls
from vistar.vlm.images import image_sha256, png_bytes
from vistar.vlm.judge import Judge
from vistar.vlm.prices import Price, load_prices, price_for
from vistar.vlm.protocols import wise_verified
from vistar.vlm.testing_server import JudgeServer
from vistar.vlm.types import JudgeRequest

REPO = Path(__file__).resolve().parents[1]


def test_second_ask_comes_from_cache_without_a_request(tmp_path):
    with JudgeServer() as srv:
        first = Judge(fast_config(srv.url, tmp_path))
        a = first.ask([(is_it_red(RED), online.parse_single), (is_it_red(BLUE), online.parse_single)])
        first.close()
        again = Judge(fast_config(srv.url, tmp_path))
        b = again.ask([(is_it_red(RED), online.parse_single), (is_it_red(BLUE), online.parse_single)])
        assert [r.parsed for r in a] == [r.parsed for r in b] == [True, False]
        assert len(srv.requests) == 2 and all(r.cached for r in b)
        assert again.ledger.cache_hits == 2 and again.ledger.calls == 0


def test_failures_are_not_cached_and_are_reasked_later(tmp_path):
    with JudgeServer() as srv:
        srv.fault_for = lambda body: "500"
        judge = Judge(fast_config(srv.url, tmp_path, max_retries=1))
        failed = judge.ask([(is_it_red(RED), online.parse_single)])
        assert not failed[0].ok and len(judge.cache) == 0 and judge.ledger.failures == 1
        srv.fault_for = None
        n = len(srv.requests)
        retried = judge.ask([(is_it_red(RED), online.parse_single)])
        assert retried[0].ok and not retried[0].cached and len(srv.requests) == n + 1 and len(judge.cache) == 1


def test_cache_only_rebuilds_without_calling(tmp_path):
    with JudgeServer() as srv:
        Judge(fast_config(srv.url, tmp_path)).ask([(is_it_red(RED), online.parse_single)])
        n = len(srv.requests)
        offline = Judge(fast_config(srv.url, tmp_path, cache_only=True))
        hit, miss = offline.ask([(is_it_red(RED), online.parse_single), (is_it_red(BLUE), online.parse_single)])
        assert hit.ok and hit.parsed is True and not miss.ok and "cache-only" in miss.error
        assert len(srv.requests) == n


def test_cached_replies_are_parsed_again_by_the_current_parser(tmp_path):
    with JudgeServer() as srv:
        srv.replies.append('{"answer": "yes", "confidence": 3}')
        assert Judge(fast_config(srv.url, tmp_path)).ask([(is_it_red(RED), online.parse_single)])[0].parsed is True
        again = Judge(fast_config(srv.url, tmp_path))
        hit = again.ask([(is_it_red(RED), lambda text: json.loads(text)["confidence"])])[0]
        assert hit.ok and hit.cached and hit.parsed == 3 and len(srv.requests) == 1

        def stricter(text):
            raise ReplyFormatError("needs a reason")
        offline = Judge(fast_config(srv.url, tmp_path, cache_only=True)).ask([(is_it_red(RED), stricter)])[0]
        assert not offline.ok and offline.error == "cached reply no longer parses: needs a reason"
        asked = again.ask([(is_it_red(RED), online.parse_single), (is_it_red(RED, item="q2"), stricter)])
        assert asked[0].cached and not asked[1].ok and len(srv.requests) == 1 + 2  # q2 asked and re-asked once


CRASHING_RUN = """
import sys
from tests.support.vlm_helpers import BLUE, RED, fast_config, is_it_red
from vistar.vlm.hwpq import generate, online
from vistar.vlm.hwpq.questionnaire import Level, Pair, Questionnaire
from vistar.vlm.hwpq.stage import _calls
from vistar.vlm.judge import Judge
from pathlib import Path
judge = Judge(fast_config(sys.argv[1], Path(sys.argv[2]), concurrency=1, timeout_s=60))
judge.ask([(is_it_red(rgb, item=f"q{i}"), online.parse_single) for i, rgb in enumerate([RED, BLUE, RED, BLUE])])
"""


@pytest.mark.slow
def test_a_run_killed_mid_batch_keeps_every_answer_it_got(tmp_path):
    with JudgeServer(timeout_sleep_s=20) as srv:
        srv.fault_for = lambda body: "timeout" if len(srv.requests) >= 3 else None  # the third question hangs
        child = subprocess.Popen([sys.executable, "-c", CRASHING_RUN, srv.url, str(tmp_path)], cwd=REPO)
        deadline = time.monotonic() + 60
        while len(srv.requests) < 3 and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        child.kill()  # SIGKILL: no cleanup, no flush
        child.wait()
        assert len(srv.requests) == 3
        srv.fault_for = None
        judge = Judge(fast_config(srv.url, tmp_path, concurrency=1))
        replies = judge.ask([(is_it_red(rgb, item=f"q{i}"), online.parse_single) for i, rgb in enumerate([RED, BLUE, RED, BLUE])])
    assert [r.parsed for r in replies] == [True, False, True, False]
    assert [r.cached for r in replies] == [True, True, False, False] and len(srv.requests) == 3 + 2


def test_every_key_part_changes_the_key():
    cfg = JudgeConfig(url="http://127.0.0.1:1/v1", model="m")
    req = is_it_red(RED)
    base = cache_key(cfg, req)
    variants = [cache_key(replace(cfg, model="m2"), req), cache_key(replace(cfg, model_version="2024"), req),
                cache_key(replace(cfg, temperature=0.5), req), cache_key(replace(cfg, seed=1), req),
                cache_key(replace(cfg, max_tokens=7), req), cache_key(replace(cfg, image_max_side=512), req),
                cache_key(cfg, replace(req, protocol="hwpq@2")),
                cache_key(cfg, replace(req, template_hash="other")), cache_key(cfg, replace(req, image_sha256="x")),
                cache_key(cfg, replace(req, item_id="q2")), cache_key(cfg, replace(req, vote=2)),
                # same item id and templates but other request text (e.g. the benchmark data was edited)
                cache_key(cfg, replace(req, user=req.user + " Is it round?")), cache_key(cfg, replace(req, system="Be lenient."))]
    assert len({base, *variants}) == len(variants) + 1
    assert cache_key(replace(cfg, url="http://elsewhere/v1", timeout_s=5, key_env="K"), req) == base  # transport is not identity


def test_legacy_key_is_the_key_before_the_request_text_joined_it():
    """The value the cache key had for this request in the versions that wrote caches without the text hash."""
    cfg = JudgeConfig(url="http://127.0.0.1:1/v1", model="m", model_version="v7")
    req = JudgeRequest("hwpq@1", "abc/L1.1.P/v1", online.PER_QUESTION_HASH, online.per_question_prompt("Is it red?"),
                       online.SYSTEM, (), "f00d", 1, max_tokens=64)
    assert legacy_key(cfg, req) == "40105bde16bb2d6d80742a208a9042859799e65e5c6c5da8e27a364db19ca2f0"
    assert legacy_key(cfg, replace(req, user="other text")) == legacy_key(cfg, req) != cache_key(cfg, req)


def test_decoding_settings_written_as_int_or_float_give_one_key_and_the_default_key_is_unchanged(tmp_path):
    """`temperature: 0` in judge.yaml is the built-in 0.0: one key, so a cached answer is not asked again."""
    cfg = JudgeConfig(url="http://127.0.0.1:1/v1", model="m", model_version="v7")
    req = JudgeRequest("hwpq@1", "abc/L1.1.P/v1", online.PER_QUESTION_HASH, online.per_question_prompt("Is it red?"),
                       online.SYSTEM, (), "f00d", 1, max_tokens=64)
    # the key this request had before the settings were coerced (computed by the version without coercion)
    assert cache_key(cfg, req) == "93d4797628c2e7d6e1c776eca8d5206a1619881bbdc4a2aefd1d2decc1e32d88"
    conf = tmp_path / "judge.yaml"
    conf.write_text("url: http://127.0.0.1:1/v1\nmodel: m\nmodel_version: v7\ntemperature: 0\nseed: 0.0\n"
                    "max_tokens: 1024.0\nimage_max_side: 1536\n")
    from_yaml = config_from_options({"judge_config": str(conf)})
    assert from_yaml == cfg and cache_key(from_yaml, req) == cache_key(cfg, req)
    assert legacy_key(from_yaml, req) == legacy_key(cfg, req)
    assert type(from_yaml.temperature) is float and type(from_yaml.seed) is int
    assert JudgeConfig(url="u", model="m", seed=2**60 + 1, max_tokens="64").seed == 2**60 + 1
    for bad in ({"temperature": "warm"}, {"seed": 1.5}, {"max_tokens": True}, {"temperature": float("nan")},
                {"seed": float("inf")}, {"temperature": None}):
        with pytest.raises(ValueError, match="judge (temperature|seed|max_tokens) must be"):
            JudgeConfig(url="u", model="m", **bad)


def _old_cache(tmp_path, cfg, calls_and_raws) -> None:
    """A cache as older versions wrote it: the answers stored under the key without the request text hash."""
    cache = JudgeCache(cfg.cache_file)
    for req, raw in calls_and_raws:
        cache.put(legacy_key(cfg, req), cfg, req, raw, None, 11, 3)
    cache.close()


def _hwpq_calls(mode):
    q = Questionnaire((Level("L1", 1.0, (Pair("L1.1", 1.0, "Is the cup red?", "Is the cup blue?"),)),))
    image = solid(RED)
    return [(req, parse) for req, parse, _ in _calls(q, png_bytes(image), image_sha256(image), mode, 1)]


@pytest.mark.parametrize("mode", ["per-question", "batched"])
def test_hwpq_answers_cached_under_the_old_key_are_reused_and_stored_under_the_new_key(tmp_path, mode):
    with JudgeServer() as srv:
        cfg = fast_config(srv.url, tmp_path)
        calls = _hwpq_calls(mode)
        raws = ['{"answers": {"L1.1.P": "yes", "L1.1.N": false}}'] if mode == "batched" else ["Yes.", '{"Answer": "no"}']
        _old_cache(tmp_path, cfg, [(req, raw) for (req, _), raw in zip(calls, raws)])
        offline = Judge(replace(cfg, cache_only=True))
        replies = offline.ask(calls)
        assert all(r.ok and r.cached for r in replies), [r.error for r in replies]
        expected = [{"L1.1.P": True, "L1.1.N": False}] if mode == "batched" else [True, False]
        assert [r.parsed for r in replies] == expected  # parsed again by today's parser
        assert len(offline.cache) == 2 * len(calls)  # copied under the current key
        assert all(offline.cache.get(cache_key(cfg, req)) == raw for (req, _), raw in zip(calls, raws))
        offline.close()
        assert Judge(cfg).ask(calls)[0].cached and srv.requests == []


def test_hwpq_generate_requests_reuse_the_old_key_too(tmp_path):
    from vistar.prompts_dsl.model import Prompt
    req = generate.request(Prompt("T2I", "MA", "a glass cup", {"material": "glass"}))
    assert req.text_fixed_by_id
    cfg = fast_config("http://127.0.0.1:1/v1", tmp_path, cache_only=True)
    _old_cache(tmp_path, cfg, [(req, "not a questionnaire")])
    reply = Judge(cfg).ask([(req, generate.parse)])[0]
    assert not reply.ok and reply.error.startswith("cached reply no longer parses")  # found, re-parsed, refused


def test_the_old_key_is_not_reused_once_the_hwpq_rendering_changes(monkeypatch):
    assert online.TEXT_FIXED_BY_ID and generate.TEXT_FIXED_BY_ID
    monkeypatch.setitem(generate.ANGLE_FOCUS, "MA", "material accuracy, reworded")  # not part of TEMPLATE_HASH
    monkeypatch.setattr(online, "PER_QUESTION", online.PER_QUESTION + " ")
    assert generate._rendering() != "9c179a5e023a3ec7" and online._rendering() != "a4acc59fff0f7d3a"


def test_benchmark_answers_under_the_old_key_are_asked_again_and_cache_only_says_why(tmp_path):
    """A benchmark request's text comes from the data (an edited record keeps its id), so an old answer is not
    trusted: asked once more; a cache-only run names the key change as the reason for the miss."""
    image = solid(RED)
    req = JudgeRequest("wise-verified@1", "mooncake-1/score", "t", "Does the image show a mooncake?", "", (png_bytes(image),),
                       image_sha256(image))
    with JudgeServer() as srv:
        cfg = fast_config(srv.url, tmp_path)
        _old_cache(tmp_path, cfg, [(req, '{"score": 1, "reason": "a mooncake"}')])
        miss = Judge(replace(cfg, cache_only=True)).ask([(req, wise_verified.parse)])[0]
        assert not miss.ok and "before the request text joined it" in miss.error and "wise-verified@1" in miss.error
        srv.replies.append('{"score": 0, "reason": "no mooncake"}')
        asked = Judge(cfg).ask([(req, wise_verified.parse)])[0]
        assert asked.ok and not asked.cached and asked.parsed["score"] == 0 and len(srv.requests) == 1
    fresh = Judge(replace(cfg, cache_only=True)).ask([(req, wise_verified.parse)])[0]
    assert fresh.ok and fresh.parsed["score"] == 0


def test_user_price_table_wins_and_cost_is_tokens_times_price(tmp_path):
    table = tmp_path / "prices.yaml"
    table.write_text('models:\n  "test-*": {input: 3.0, output: 15.0}\n  gpt-4o: {input: 1.0, output: 1.0}\n')
    prices = load_prices(table)
    assert price_for("test-judge", prices) == Price(3.0, 15.0)
    assert price_for("gpt-4o", prices) == Price(1.0, 1.0)                 # user entry overrides the default
    assert price_for("gpt-4o-mini-2024-07-18", prices) == Price(0.15, 0.60)  # default table still there
    assert price_for("unknown-model", prices) is None
    assert Price(3.0, 15.0).cost(1000, 100) == pytest.approx(0.0045)
    with JudgeServer() as srv:
        judge = Judge(fast_config(srv.url, tmp_path, prices=str(table)))
        replies = judge.ask([(is_it_red(RED), online.parse_single), (is_it_red(BLUE), online.parse_single)],
                            bill=[("img-red", "p1"), ("img-blue", "p1")])
    s = judge.ledger.summary()
    expected = sum(3.0 * r.prompt_tokens + 15.0 * r.completion_tokens for r in replies) / 1e6
    assert s["cost_usd"] == pytest.approx(expected) and s["images"] == 2 and s["prompts"] == 1
    assert s["cost_per_image_usd"] == pytest.approx(expected / 2)
    assert s["cost_per_1000_prompts_usd"] == pytest.approx(expected * 1000)


def test_bad_price_table_and_bad_settings_are_clear_errors(tmp_path):
    table = tmp_path / "prices.yaml"
    table.write_text("models:\n  m: {input: cheap}\n")
    with pytest.raises(ValueError, match="price of 'm' needs numeric"):
        load_prices(table)
    conf = tmp_path / "judge.yaml"
    conf.write_text("url: http://127.0.0.1:1/v1\nmodel: m\nvotez: 3\n")
    with pytest.raises(ValueError, match="unknown judge setting"):
        config_from_options({"judge_config": str(conf)})
    with pytest.raises(ValueError, match="odd"):
        JudgeConfig(url="u", model="m", votes=2)
    assert config_from_options({}) is None
    conf.write_text("url: http://127.0.0.1:1/v1\nmodel: m\nvotes: 5\n")
    assert config_from_options({"judge_config": str(conf), "judge_model": "other"}) == JudgeConfig(url="http://127.0.0.1:1/v1", model="other", votes=5)


def test_large_images_are_downscaled_before_sending():
    import io

    import numpy as np
    from PIL import Image

    wide = np.zeros((1000, 3000, 3), np.uint8)
    assert Image.open(io.BytesIO(png_bytes(wide, 1536))).size == (1536, 512)
    assert Image.open(io.BytesIO(png_bytes(wide, 0))).size == (3000, 1000)
    assert Image.open(io.BytesIO(png_bytes(solid(RED), 1536))).size == (24, 24)


def test_missing_client_dependency_skips_with_the_install_command(monkeypatch):
    import sys

    from vistar.api import RunOptions, StageContext
    from vistar.vlm.errors import JudgeUnavailable
    from vistar.vlm.runtime import judge_from_context

    monkeypatch.setitem(sys.modules, "vistar.vlm.judge", None)  # as if httpx (imported by the client) were absent
    ctx = StageContext(options=RunOptions(judge=JudgeConfig(url="http://127.0.0.1:1/v1", model="m")))
    with pytest.raises(JudgeUnavailable, match=r"pip install 'vistar\[vlm\]'"):
        judge_from_context(ctx)
    with pytest.raises(JudgeUnavailable, match="--judge-url"):
        judge_from_context(StageContext())
