"""The judge a run uses: cache first, then the client for what is missing, concurrently and bounded;
successful answers go to the cache as they arrive, every answer (cached or not) to the cost ledger."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

from .cache import JudgeCache, cache_key, legacy_key
from .client import ChatClient
from .config import JudgeConfig
from .errors import ReplyFormatError
from .local_vlm import BASE_URL as LOCAL_BASE_URL, LocalVLMTransport, keyed_version, local_path
from .prices import Ledger, load_prices, price_for
from .types import JudgeReply, JudgeRequest, Parser


class Judge:
    def __init__(self, cfg: JudgeConfig, ledger: Ledger | None = None, transport=None, device: str = "cpu"):
        local = local_path(cfg.url)
        if local is not None:  # also cache-only: the key names the dtype the answers were computed in
            cfg = replace(cfg, model_version=keyed_version(cfg.model_version, device))
        self.cfg = cfg
        self.ledger = ledger if ledger is not None else Ledger()
        self.cache = JudgeCache(cfg.cache_file)
        price = price_for(cfg.model, load_prices(cfg.prices))
        if local is not None and transport is None and not cfg.cache_only:
            transport = LocalVLMTransport(local, device)
            cfg = replace(cfg, url=LOCAL_BASE_URL)
        self.client = None if cfg.cache_only else ChatClient(cfg, price, transport)

    @property
    def identity(self) -> str:
        """What the row details record as the judge (scores from different judges are not comparable)."""
        return self.cfg.model + (f":{self.cfg.model_version}" if self.cfg.model_version else "")

    def close(self) -> None:
        self.cache.close()
        if self.client:
            self.client.close()

    def ask(self, calls: list[tuple[JudgeRequest, Parser]], bill: list[tuple[str, str]] | None = None,
            ledger: Ledger | None = None) -> list[JudgeReply]:
        """Replies in the order of `calls`; `bill[i]` = (image, prompt) the ledger charges call i to. `ledger`: the
        one to charge (default: this judge's own); a scoring worker keeps its judge for the whole run but charges
        each batch to that batch's ledger, which the run sums. Each answer is cached the moment it arrives, so a
        run that dies mid-batch loses nothing already answered."""
        keys = [cache_key(self.cfg, req) for req, _ in calls]
        replies: list[JudgeReply | None] = []
        todo = []
        for i, key in enumerate(keys):
            hit = self._cached(key, *calls[i])
            if hit is not None and (hit.ok or self.client is None):
                replies.append(hit)
            elif self.client is None:
                replies.append(JudgeReply(ok=False, error=self._miss(calls[i][0])))
            else:
                replies.append(None)
                todo.append(i)
        first: dict[str, int] = {}
        for i in todo:  # identical questions within one call (e.g. identical images) are asked once
            first.setdefault(keys[i], i)
        unique = list(first.values())
        if unique:
            workers = min(self.cfg.concurrency, len(unique))
            with ThreadPoolExecutor(max_workers=workers) as pool:
                fresh = dict(zip(unique, pool.map(lambda i: self._ask(keys[i], *calls[i]), unique)))
            for i in todo:
                source = fresh[first[keys[i]]]
                replies[i] = source if i in fresh else replace(source, cached=True)
        ledger = self.ledger if ledger is None else ledger
        for i, reply in enumerate(replies):
            image, prompt = bill[i] if bill else ("", "")
            ledger.add(reply, image=image, prompt=prompt)
        return replies  # type: ignore[return-value]

    def _cached(self, key: str, req: JudgeRequest, parse: Parser) -> JudgeReply | None:
        """The cached reply, parsed again by the current parser so a parser fix applies to old answers; a reply
        it no longer accepts comes back not ok (asked again unless the run is cache-only). A request whose text
        is fixed by its id also finds an answer stored under the key older versions used, and copies it under
        the current key."""
        raw, old = self.cache.get(key), None
        if raw is None and req.text_fixed_by_id:
            old = legacy_key(self.cfg, req)
            raw = self.cache.get(old)
        if raw is None:
            return None
        try:
            parsed = parse(raw)
        except ReplyFormatError as exc:
            return JudgeReply(ok=False, text=raw, error=f"cached reply no longer parses: {exc}", cached=True)
        if old is not None:
            self.cache.adopt(old, key, parsed)
        return JudgeReply(ok=True, text=raw, parsed=parsed, cached=True)

    def _miss(self, req: JudgeRequest) -> str:
        """Why a cache-only run has no answer: never asked, or asked by an older version under its key."""
        if not req.text_fixed_by_id and self.cache.get(legacy_key(self.cfg, req)) is not None:
            return ("not in the judge cache under its current key and the run is cache-only: the cache holds an answer "
                    f"under the key of vistar versions before the request text joined it, which is not reused for "
                    f"{req.protocol} (its text comes from the benchmark data, which may have been edited since); "
                    "run once without --judge-cache-only to ask it again (docs/judge.md, 'The judge cache')")
        return "not in the judge cache and the run is cache-only"

    def _ask(self, key: str, req: JudgeRequest, parse: Parser) -> JudgeReply:
        reply = self.client.complete(req, parse)
        if reply.ok:
            self.cache.put(key, self.cfg, req, reply.text, reply.parsed, reply.prompt_tokens, reply.completion_tokens)
        return reply
