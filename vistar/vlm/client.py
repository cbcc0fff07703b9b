"""OpenAI-compatible chat-completions client (OpenAI, vLLM, Ollama, DashScope compatible mode, the local
test server): temperature and seed fixed, timeouts, retries with exponential backoff on 429/5xx/timeouts/
unreadable bodies, and bounded re-asks when the answer does not parse. Every loop is bounded in count.
"""
from __future__ import annotations

import base64
import time

import httpx

from .config import JudgeConfig
from .errors import ReplyFormatError
from .images import mime_of
from .prices import Price
from .types import JudgeReply, JudgeRequest, Parser

REASK = ("Your previous reply could not be used: {error}. Answer the same question again, following the "
         "requested output format exactly, with nothing else.")


def build_messages(req: JudgeRequest) -> list[dict]:
    if req.wire is not None:
        return _wire_messages(req)
    messages = [{"role": "system", "content": req.system}] if req.system else []
    if req.images:
        parts = [{"type": "text", "text": req.user}]
        # labelled by their own header: a benchmark's reference image (GenExam's ground truth) is sent as its file
        parts += [{"type": "image_url", "image_url": {"url": f"data:{mime_of(data)};base64," + base64.b64encode(data).decode()}}
                  for data in req.images]
        messages.append({"role": "user", "content": parts})
    else:
        messages.append({"role": "user", "content": req.user})
    return messages


def _wire_messages(req: JudgeRequest) -> list[dict]:
    """The messages as the benchmark's script builds them: content as parts, text first, then the images."""
    wire = req.wire
    messages = []
    if req.system:
        messages.append({"role": "system", "content": [{"type": "text", "text": req.system}] if wire.system_parts else req.system})
    parts: list[dict] = [{"type": "text", "text": req.user}]
    for data in req.images:
        url = {"url": f"data:{wire.image_mime or mime_of(data)};base64," + base64.b64encode(data).decode()}
        parts.append({"type": "image_url", "image_url": {**url, "detail": wire.image_detail} if wire.image_detail else url})
    messages.append({"role": "user", "content": parts})
    return messages


def request_body(cfg: JudgeConfig, req: JudgeRequest, messages: list[dict]) -> dict:
    """vistar's decoding (temperature, seed, max_tokens), or exactly the fields the benchmark's script sends."""
    if req.wire is not None:
        return {"model": cfg.model, "messages": messages, **dict(req.wire.body)}
    return {"model": cfg.model, "messages": messages, "temperature": cfg.temperature,
            "seed": cfg.seed + req.vote, "max_tokens": req.max_tokens or cfg.max_tokens}


class ChatClient:
    def __init__(self, cfg: JudgeConfig, price: Price | None = None, transport: httpx.BaseTransport | None = None):
        self.cfg = cfg
        self.price = price
        headers = {"Authorization": f"Bearer {cfg.api_key}"} if cfg.api_key else {}
        url = cfg.url.rstrip("/") + "/"
        self._http = httpx.Client(base_url=url, headers=headers, transport=transport,
                                  timeout=httpx.Timeout(cfg.timeout_s, connect=min(cfg.timeout_s, 10.0)))

    def close(self) -> None:
        self._http.close()

    def complete(self, req: JudgeRequest, parse: Parser) -> JudgeReply:
        """Ask, parse, re-ask on a malformed answer (at most `max_reasks` times); never raises for judge faults."""
        messages = build_messages(req)
        reply = JudgeReply(ok=False)
        tries = req.wire.attempts if req.wire is not None else self.cfg.max_reasks + 1
        for reask in range(tries):
            reply.reasks = reask
            text, error = self._post(req, messages, reply)
            if error is not None:
                reply.error = error
                break
            if req.wire is not None and req.wire.clean is not None:
                text = req.wire.clean(text)
            reply.text = text
            try:
                reply.parsed = parse(text)
            except ReplyFormatError as exc:
                reply.error = f"malformed reply after {reask + 1} attempt(s): {exc}; last reply: {_clip(text)}"
                if req.wire is None:  # a benchmark's script asks again with the same messages
                    messages = messages + [{"role": "assistant", "content": text},
                                           {"role": "user", "content": REASK.format(error=exc)}]
                continue
            reply.ok, reply.error = True, None
            break
        reply.cost_usd = self.price.cost(reply.prompt_tokens, reply.completion_tokens) if self.price else None
        return reply

    def _post(self, req: JudgeRequest, messages: list[dict], reply: JudgeReply) -> tuple[str | None, str | None]:
        """One answer text, retrying transient faults; returns (text, None) or (None, error)."""
        cfg = self.cfg
        body = request_body(cfg, req, messages)
        last = "no attempt made"
        for attempt in range(cfg.max_retries + 1):
            if attempt:
                time.sleep(self._delay(attempt, last))
            reply.attempts += 1
            try:
                resp = self._http.post("chat/completions", json=body)
            except httpx.TimeoutException:
                last = f"timeout after {cfg.timeout_s:g}s"
                continue
            except httpx.TransportError as exc:
                last = f"connection problem: {type(exc).__name__}"
                continue
            if resp.status_code == 429 or resp.status_code >= 500:
                last = f"HTTP {resp.status_code}" + _retry_after_note(resp)
                continue
            if resp.status_code >= 400:
                return None, f"HTTP {resp.status_code}: {resp.text[:200]}"
            try:
                data = resp.json()
                text = _content(data["choices"][0]["message"])
            except (ValueError, KeyError, IndexError, TypeError):
                last = "unreadable response body (truncated or not chat-completions JSON)"
                continue
            usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
            reply.prompt_tokens += _count(usage.get("prompt_tokens"))
            reply.completion_tokens += _count(usage.get("completion_tokens"))
            return text, None
        return None, f"gave up after {cfg.max_retries + 1} attempt(s): {last}"

    def _delay(self, attempt: int, last: str) -> float:
        delay = self.cfg.backoff_s * 2 ** (attempt - 1)
        if "retry-after=" in last:
            try:
                delay = max(delay, float(last.rsplit("retry-after=", 1)[1].rstrip(")")))
            except ValueError:
                pass
        return min(delay, self.cfg.max_backoff_s)


def _retry_after_note(resp: httpx.Response) -> str:
    value = resp.headers.get("retry-after")
    try:
        return f" (retry-after={float(value):g})" if value is not None else ""
    except ValueError:
        return ""


def _content(message: dict) -> str:
    """The answer text; a refusal (`content: null` with `refusal`) or a null content is an answer too, which
    the parser then rejects (re-asked), rather than a broken response to retry."""
    content = message["content"]
    if content is None:
        return message.get("refusal") or ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # some servers return content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    raise TypeError("message content is neither text nor parts")


def _count(value) -> int:
    """A token count from `usage`; servers that leave it out or send junk count as 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _clip(text: str, limit: int = 300) -> str:
    """The raw reply for the error record, shortened to `limit` characters."""
    return repr(text if len(text) <= limit else text[:limit] + " …")
