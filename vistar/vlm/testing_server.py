"""A local judge for tests and offline demos: a real HTTP server on 127.0.0.1 speaking OpenAI
chat-completions, whose answers are deterministic functions of the request (the image's colours and the
question text), with switchable faults: timeout, 429, 500, truncated body, non-JSON body, malformed answer,
refusal (`content: null` with a `refusal` text); and canned reply texts (`replies`) to play other judges.

Answer rules (documented so tests can compute expectations independently; vistar.vlm.protocols.demo):
- the image's *dominant colour* is red/green/blue when that channel's mean exceeds both others by 40, else
  "gray"; the image is *bright* when its mean intensity is above 127.
- a yes/no question is answered yes iff it names the dominant colour; a question naming no colour is answered
  yes iff the image is bright.
- 0–N rubric scores are N when the image is bright, else 0; multiple choice picks the option naming the
  dominant colour, else (E). The benchmarks' own prompts (`--upstream`) are answered by the same rules, in
  the format each asks for (`Score: 1`, `Consistency: 2` lines, GenExam's fenced `answers` object).
A request to a registered protocol is recognised by its system prompt, which the protocol declares (`systems`),
and answered by the protocol's own `demo_reply`: rewording a template cannot leave the demo judge behind.

Run standalone: `python -m vistar.vlm.testing_server --port 8765` (then --judge-url http://127.0.0.1:8765/v1).
"""
from __future__ import annotations

import argparse
import ast
import base64
import io
import json
import re
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
from PIL import Image

from .protocols.demo import COLOURS, yes

MAX_BODY = 64 << 20


def image_facts(data_url: str) -> tuple[str, bool]:
    png = base64.b64decode(data_url.split(",", 1)[1])
    rgb = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=np.float64).reshape(-1, 3).mean(axis=0)
    order = np.argsort(rgb)[::-1]
    dominant = COLOURS[order[0]] if rgb[order[0]] - rgb[order[1]] > 40 else "gray"
    return dominant, float(rgb.mean()) > 127


def _parts(messages: list[dict]) -> tuple[list[str], list[str]]:
    """(texts, image data URLs) of the user turns, in order."""
    texts, images = [], []
    for m in messages:
        if m.get("role") != "user":
            continue
        content = m.get("content")
        for p in content if isinstance(content, list) else [{"type": "text", "text": content or ""}]:
            if p.get("type") == "text":
                texts.append(p.get("text", ""))
            elif p.get("type") == "image_url":
                images.append(p["image_url"]["url"])
    return texts, images


def _system(messages: list[dict]) -> str:
    """The system prompt's text, sent as a string or as text parts."""
    for m in messages:
        if m.get("role") == "system":
            content = m.get("content")
            return content if isinstance(content, str) else "".join(p.get("text", "") for p in content or [])
    return ""


def _protocol_for(system: str):
    """The registered protocol that declares this system prompt, if any."""
    from ..engine import registry

    return next((p for p in map(registry.protocol, registry.PROTOCOLS) if system and system in p.systems), None)


def answer(messages: list[dict]) -> str:
    """The deterministic reply text for a chat request (a re-ask is answered like the original question)."""
    texts, images = _parts(messages)
    dominant, bright = image_facts(images[0]) if images else ("gray", False)
    text, system = texts[0] if texts else "", _system(messages)
    upstream = _upstream_reply(text, dominant, bright, lambda top: top if bright else 0)
    proto = _protocol_for(system) if upstream is None else None
    if proto is not None:
        return proto.demo_reply(system, text, (dominant, bright))
    return upstream if upstream is not None else _reply(text, dominant, bright)


def usage_tokens(messages: list[dict]) -> int:
    """Prompt tokens as an API would bill them, roughly: 4 characters per token plus 255 per image."""
    texts, images = _parts(messages)
    system = sum(len(m.get("content") or "") for m in messages if m.get("role") != "user" and isinstance(m.get("content"), str))
    return (sum(map(len, texts)) + system) // 4 + 255 * len(images)


def _reply(q: str, dominant: str, bright: bool) -> str:
    """HWPQ's questions (the questionnaire, batched and per-question answers)."""
    if "hierarchical questionnaire" in q:
        core = re.search(r"Prompt: (.*)", q).group(1)
        return json.dumps({"levels": [
            {"level": "L1", "weight": 0.6, "pairs": [{"id": "L1.1", "weight": 1.0, "positive": f"Does the image show {core}?",
                                                     "negative": f"Is {core} missing from the image?"}]},
            {"level": "L4", "weight": 0.4, "pairs": [{"id": "L4.1", "weight": 1.0, "positive": "Is the image predominantly red?",
                                                     "negative": "Is the image predominantly blue?"}]}]})
    if '"answers"' in q:
        ids = re.findall(r"^([A-Za-z0-9_.-]+\.[PN]): (.*)$", q, re.M)
        return json.dumps({"answers": {qid: yes(text, dominant, bright) for qid, text in ids}})
    if '{"answer": true}' in q:
        question = re.search(r"Question about the image: (.*)", q).group(1)
        return json.dumps({"answer": yes(question, dominant, bright)})
    return "I cannot tell."


def _upstream_reply(q: str, dominant: str, bright: bool, level) -> str | None:
    """Answers to the benchmarks' own judge prompts (`vistar score --upstream`), in the format each asks for."""
    if "# WISE Text-to-Image Evaluation Protocol" in q:
        return f"Score: {int(bright)}"
    if "# Text-to-Image Quality Evaluation Protocol" in q:
        return f"Consistency: {level(2)}\nRealism: {level(2)}\nAesthetic Quality: 1"
    if "## Scoring Points\n" in q and "global_evaluation" in q:
        points = ast.literal_eval(q.split("## Scoring Points\n", 1)[1].strip())
        glob = {"reasoning": "-", "score": level(2)}
        return "```json\n" + json.dumps({"description": "-", "answers": [
            {"reasoning": "-", "answer": int(yes(p, dominant, bright))} for p in points], "global_evaluation": {
            "Spelling": glob, "Clarity and Readability": glob, "Logical Consistency": glob}}) + "\n```"
    if "scene_score" in q:  # GPT_make_eval.py asks for vistar's PhyBench reply format
        return "{'scene_score': %d, 'phy_score': %d, 'scene_reason': 'ok', 'phy_reason': 'ok'}" % (level(2), level(3))
    if "generate detailed scoring criteria" in q:
        return "Scene Score: 2 if the scene is fully present.\nPhysical laws Score: 3 if the law is shown correctly."
    return None


class JudgeServer(ThreadingHTTPServer):
    """`faults` is consumed one per request (FIFO); `fault_for(body) -> fault|None` injects content-based faults.
    `replies` (FIFO) are reply texts sent instead of the computed answer, one per request that has no fault.
    `requests` logs every request body; `auth_headers` every Authorization header received."""

    daemon_threads = True

    def __init__(self, port: int = 0, timeout_sleep_s: float = 2.0):
        super().__init__(("127.0.0.1", port), _Handler)
        self.faults: deque[str] = deque()
        self.replies: deque[str] = deque()
        self.fault_for = None
        self.timeout_sleep_s = min(timeout_sleep_s, 30.0)
        self.requests: list[dict] = []
        self.auth_headers: list[str] = []
        self.lock = threading.Lock()
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def start(self) -> "JudgeServer":
        self._thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
        if self._thread:
            self._thread.join(timeout=5)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def next_fault(self, body: dict) -> str | None:
        with self.lock:
            self.requests.append(body)
            if self.faults:
                return self.faults.popleft()
        return self.fault_for(body) if self.fault_for else None

    def next_text(self, body: dict, fault: str | None) -> str:
        """The reply text: a canned one when queued, else the deterministic answer."""
        if fault == "malformed":
            return "Sorry, no JSON here."
        with self.lock:
            if self.replies:
                return self.replies.popleft()
        return answer(body.get("messages") or [])


class _Handler(BaseHTTPRequestHandler):
    server: JudgeServer

    def log_message(self, *args) -> None:  # quiet: tests read the request log instead
        pass

    def do_POST(self) -> None:
        if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            return self._send(404, b'{"error": "not found"}')
        length = int(self.headers.get("content-length") or 0)
        if length > MAX_BODY:
            return self._send(413, b'{"error": "request too large"}')
        try:
            body = json.loads(self.rfile.read(length))
        except ValueError:
            return self._send(400, b'{"error": "invalid JSON"}')
        with self.server.lock:
            self.server.auth_headers.append(self.headers.get("authorization") or "")
        fault = self.server.next_fault(body)
        if fault == "timeout":
            time.sleep(self.server.timeout_sleep_s)
        if fault in ("429", "500"):
            return self._send(int(fault), b'{"error": "injected fault"}', {"retry-after": "0"} if fault == "429" else None)
        if fault == "refusal":
            text = "I'm sorry, I can't help with that."
            message = {"role": "assistant", "content": None, "refusal": text}
        else:
            text = self.server.next_text(body, fault)
            message = {"role": "assistant", "content": text}
        payload = json.dumps({"id": "local", "object": "chat.completion", "model": body.get("model"),
                              "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
                              "usage": {"prompt_tokens": usage_tokens(body.get("messages") or []), "completion_tokens": len(text) // 4 + 1}}).encode()
        if fault == "truncated":
            payload = payload[: len(payload) // 2]
        elif fault == "nonjson":
            payload = b"<html>502 Bad Gateway</html>"
        self._send(200, payload)

    def _send(self, code: int, payload: bytes, headers: dict | None = None) -> None:
        self.send_response(code)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        try:
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout fault)
            pass


def main() -> None:
    parser = argparse.ArgumentParser(description="Deterministic local OpenAI-compatible judge (127.0.0.1 only).")
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    server = JudgeServer(args.port)
    print(f"judge server at {server.url} (Ctrl-C to stop)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        server.server_close()


if __name__ == "__main__":
    main()
