"""The chat-completions client against the real local HTTP judge: answers, retries, re-asks, bounded failure."""
from __future__ import annotations

import base64
import io
import json

import pytest
from PIL import Image

from tests.support.vlm_helpers import BLUE, RED, fast_config, solid
from vistar.vlm.client import ChatClient, build_messages
from vistar.vlm.errors import ReplyFormatError
from vistar.vlm.hwpq import online
from vistar.vlm.images import png_bytes
from vistar.vlm.prices import Price
from vistar.vlm.testing_server import JudgeServer
from vistar.vlm.types import JudgeRequest


def _question(text: str, rgb) -> JudgeRequest:
    return JudgeRequest("hwpq@1", "q", "t", online.per_question_prompt(text), online.SYSTEM, (png_bytes(solid(rgb)),), "sha")


@pytest.fixture()
def server():
    with JudgeServer(timeout_sleep_s=1.0) as srv:
        yield srv


def test_answer_depends_on_image_and_request_carries_decoding(server, tmp_path):
    client = ChatClient(fast_config(server.url, tmp_path, seed=7), price=Price(1.0, 2.0))
    red = client.complete(_question("Is the image predominantly red?", RED), online.parse_single)
    blue = client.complete(_question("Is the image predominantly red?", BLUE), online.parse_single)
    assert (red.ok, red.parsed, blue.ok, blue.parsed) == (True, True, True, False)
    body = server.requests[0]
    assert body["temperature"] == 0.0 and body["seed"] == 7 and body["model"] == "test-judge"
    assert body["messages"][1]["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")
    assert red.attempts == 1 and red.prompt_tokens > 255  # one image is billed 255 tokens by the server
    assert red.cost_usd == pytest.approx((red.prompt_tokens * 1.0 + red.completion_tokens * 2.0) / 1e6)


@pytest.mark.parametrize("fault", ["429", "500", "timeout", "truncated", "nonjson"])
def test_transient_faults_are_retried(server, tmp_path, fault):
    server.faults.extend([fault])
    reply = ChatClient(fast_config(server.url, tmp_path)).complete(_question("Is it red?", RED), online.parse_single)
    assert reply.ok and reply.parsed is True
    assert reply.attempts == 2 and len(server.requests) == 2


def test_persistent_fault_gives_up_after_bounded_attempts(server, tmp_path):
    server.fault_for = lambda body: "500"
    reply = ChatClient(fast_config(server.url, tmp_path, max_retries=3)).complete(_question("Is it red?", RED), online.parse_single)
    assert not reply.ok and "gave up after 4 attempt(s): HTTP 500" in reply.error
    assert len(server.requests) == 4


def test_client_error_is_not_retried(tmp_path):
    with JudgeServer() as srv:
        cfg = fast_config(srv.url.replace("/v1", "/nowhere"), tmp_path)
        reply = ChatClient(cfg).complete(_question("Is it red?", RED), online.parse_single)
    assert not reply.ok and reply.error.startswith("HTTP 404") and reply.attempts == 1


def test_malformed_answer_is_reasked_with_the_problem_then_recorded(server, tmp_path):
    server.faults.extend(["malformed"])
    client = ChatClient(fast_config(server.url, tmp_path, max_reasks=1))
    reply = client.complete(_question("Is it red?", RED), online.parse_single)
    assert reply.ok and reply.reasks == 1
    reask = server.requests[1]["messages"]
    assert reask[-2] == {"role": "assistant", "content": "Sorry, no JSON here."}
    assert "could not be used" in reask[-1]["content"]
    server.fault_for = lambda body: "malformed"
    failed = client.complete(_question("Is it red?", RED), online.parse_single)
    assert not failed.ok and failed.error.startswith("malformed reply after 2 attempt(s)") and failed.attempts == 2


def test_unreachable_endpoint_fails_cleanly(tmp_path):
    with JudgeServer() as srv:
        url = srv.url
    reply = ChatClient(fast_config(url, tmp_path, max_retries=1)).complete(_question("Is it red?", RED), online.parse_single)
    assert not reply.ok and "connection problem" in reply.error and reply.attempts == 2


def test_api_key_goes_only_to_the_authorization_header(server, tmp_path, monkeypatch):
    monkeypatch.setenv("VISTAR_TEST_KEY", "sk-test-4242-secret")
    reply = ChatClient(fast_config(server.url, tmp_path, key_env="VISTAR_TEST_KEY")).complete(_question("Is it red?", RED), online.parse_single)
    assert reply.ok and server.auth_headers == ["Bearer sk-test-4242-secret"]
    assert "sk-test-4242" not in json.dumps(server.requests)


def test_text_only_request_has_plain_content():
    req = JudgeRequest("p@1", "i", "t", "hello", "sys")
    assert build_messages(req) == [{"role": "system", "content": "sys"}, {"role": "user", "content": "hello"}]


def test_each_image_is_labelled_with_its_own_format():
    """A reference image sent as its file (GenExam's ground truth, a JPEG) is not labelled PNG."""
    buf = io.BytesIO()
    Image.fromarray(solid(BLUE)).save(buf, format="JPEG")
    req = JudgeRequest("p@1", "i", "t", "compare", images=(png_bytes(solid(RED)), buf.getvalue()))
    urls = [part["image_url"]["url"] for part in build_messages(req)[0]["content"][1:]]
    assert urls[0].startswith("data:image/png;base64,") and urls[1].startswith("data:image/jpeg;base64,")
    assert base64.b64decode(urls[1].split(",", 1)[1]) == buf.getvalue()


def test_single_answer_parser_accepts_words_and_json_rejects_the_rest():
    assert online.parse_single("Yes.") is True and online.parse_single('{"answer": "no"}') is False
    assert online.parse_single('Sure: ```json\n{"answer": true}\n```') is True
    for bad in ("maybe", '{"answer": "perhaps"}', '{"result": true}', ""):
        with pytest.raises(ReplyFormatError):
            online.parse_single(bad)
