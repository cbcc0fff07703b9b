"""Which expected texts TR can score: the recogniser must be able to output every letter (its dictionary, after
the configured normalisation) and every letter's script must be one TR scores (`metrics.TR.params.scripts`).

Why two rules: a letter outside the dictionary can never be read, so an exact render would score like a wrong
one (Cyrillic, Vietnamese tone letters); a script inside the dictionary can still be read too unreliably to rank
a one-letter typo (Greek: 15 % of plain renders read exactly, docs/metrics/tr.md, Scripts). Either way the row is
`skipped` with the script and the letters named, never scored low and never dropped silently.
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import Any

from .text_similarity import APOSTROPHES, strip_accents

_WORD = re.compile(r"[^\W_]+")  # runs of letters and digits: words as the normalisation splits them


def script_of(char: str) -> str:
    """The Unicode script of a letter, from its character name (`Ж` → Cyrillic, `漢` → Han); digits → Common."""
    if unicodedata.category(char)[0] != "L":
        return "Common"
    word = unicodedata.name(char, "UNKNOWN").split(" ")[0]
    return {"CJK": "Han"}.get(word, word.title())


def script_names(scripts: Iterable[str] | str) -> set[str]:
    """`metrics.TR.params.scripts` as a set: a list of names, or one name (`scripts: Latin` in YAML)."""
    return {scripts} if isinstance(scripts, str) else set(scripts)


def _letters(expected: str) -> list[str]:
    """Letters and digits of the NFKC text as the recogniser would have to output them (apostrophe letters ʼ ʻ are
    deleted by the normalisation, so never needed)."""
    return [c for c in unicodedata.normalize("NFKC", expected) if unicodedata.category(c)[0] in "LN" and c not in APOSTROPHES]


def _readable(char: str, alphabet: frozenset[str], case_sensitive: bool, fold_accents: bool) -> bool:
    forms = {char} if case_sensitive else {char, char.lower(), char.upper()}
    if fold_accents:
        forms |= {strip_accents(f) for f in forms}
    return bool(forms & alphabet)


def unreadable(expected: str, alphabet: frozenset[str] | None, *, case_sensitive: bool = False,
               fold_accents: bool = False) -> list[str]:
    """Letters and digits of the expected text the recogniser cannot output, after the configured normalisation
    (case-insensitive: either case will do; `fold_accents`: the letter without its accent will do). None: the
    alphabet is unknown, nothing is reported."""
    if alphabet is None:
        return []
    return sorted({c for c in _letters(expected) if not _readable(c, alphabet, case_sensitive, fold_accents)})


def unscored_scripts(expected: str, scripts: Iterable[str] | str) -> dict[str, list[str]]:
    """Script → its letters, for the words of the expected text written in scripts TR is not set to score: words
    of two or more letters none of which is of a scored script. A lone letter or one inside a scored-script word
    is a symbol (`π`, `5Ω`, `10 µm`), read by the recogniser like one, and does not make the text Greek."""
    allowed = script_names(scripts)
    out: dict[str, set[str]] = {}
    for word in _WORD.findall(unicodedata.normalize("NFKC", expected)):
        letters = [c for c in word if unicodedata.category(c)[0] == "L" and c not in APOSTROPHES]
        if len(letters) >= 2 and not any(script_of(c) in allowed for c in letters):
            for c in letters:
                out.setdefault(script_of(c), set()).add(c)
    return {s: sorted(cs) for s, cs in sorted(out.items())}


def by_script(letters: list[str]) -> str:
    """`Cyrillic Б Д; Latin ở` — letters grouped under their script's name, at most 12 letters shown."""
    groups: dict[str, list[str]] = {}
    for c in letters:
        groups.setdefault(script_of(c), []).append(c)
    return "; ".join(f"{s} {' '.join(cs[:12])}" + (f" (+{len(cs) - 12} more)" if len(cs) > 12 else "")
                     for s, cs in sorted(groups.items()))


def support(expected: str, alphabet: frozenset[str] | None, scripts: Iterable[str] | str, *, case_sensitive: bool = False,
            fold_accents: bool = False) -> tuple[str | None, dict[str, Any]]:
    """(why TR cannot score this text, details) — (None, {}) when it can. Letters the recogniser cannot output
    come first (they can never be read); then scripts TR is not set to score."""
    missing = unreadable(expected, alphabet, case_sensitive=case_sensitive, fold_accents=fold_accents)
    other = unscored_scripts(expected, scripts)
    if missing:
        foldable = not fold_accents and not other and not unreadable(expected, alphabet, case_sensitive=case_sensitive,
                                                                    fold_accents=True)
        hint = "; with fold_accents: true they are compared without accents" if foldable else ""
        return (f"the OCR model cannot read {by_script(missing)} (not in its alphabet), so TR cannot measure this "
                f"text{hint} (docs/metrics/tr.md, Scripts)",
                {"unreadable": missing, "scripts": sorted({script_of(c) for c in missing})})
    if other:
        letters = [c for cs in other.values() for c in cs]
        return (f"TR does not score {', '.join(other)} text ({by_script(letters)}): not validated with this OCR model "
                f"(Greek: measured unreliable); TR scores {', '.join(sorted(script_names(scripts)))} (metrics.TR.params.scripts; "
                "docs/metrics/tr.md, Scripts)",
                {"unreadable": [], "scripts": list(other), "script_letters": other})
    return None, {}
