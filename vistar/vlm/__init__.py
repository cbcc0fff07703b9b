"""Judge layer: VLM/LLM judges behind one OpenAI-compatible client, their persistent cache and cost
ledger, the HWPQ questionnaires (angles SF, CUL, MA) and the sibling-benchmark protocols.

Importing this package is cheap: httpx and sqlite are touched only when a judge is actually used.
"""
