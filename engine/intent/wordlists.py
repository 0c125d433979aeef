"""Reviewed word lists of the reader (``resources/reader/*.txt``): one form a line, ``#`` comments, a form ending
in ``*`` also matching longer words, a space matching any run of spaces or hyphens."""

from __future__ import annotations

import re
from functools import lru_cache

from engine.settings import RESOURCES_DIR


@lru_cache(maxsize=8)
def word_list(name: str) -> re.Pattern[str]:
    """The forms of ``resources/reader/<name>.txt`` as one case-insensitive pattern (without word boundaries)."""
    lines = (RESOURCES_DIR / "reader" / f"{name}.txt").read_text(encoding="utf-8").splitlines()
    forms = [f.strip() for f in lines if f.strip() and not f.lstrip().startswith("#")]
    body = "|".join(r"[\s-]+".join(map(re.escape, f.rstrip("*").split())) + (r"\w*" if f.endswith("*") else "")
                    for f in forms)
    return re.compile(f"(?:{body})", re.IGNORECASE)


@lru_cache(maxsize=8)
def whole_words(name: str) -> re.Pattern[str]:
    """The forms of ``resources/reader/<name>.txt`` matched as whole words (read once)."""
    return re.compile(rf"\b{word_list(name).pattern}\b", re.IGNORECASE)


def states_a_cause(text: str) -> bool:
    """Whether ``text`` (a filing's sentence or passage) states a cause: one of the phrases of
    ``resources/reader/causal.txt`` ("due to", "driven by", "reflecting")."""
    return whole_words("causal").search(text) is not None


@lru_cache(maxsize=8)
def word_set(name: str) -> frozenset[str]:
    """The words of ``resources/reader/<name>.txt`` (whitespace-separated, ``#`` comments), lower case."""
    lines = (RESOURCES_DIR / "reader" / f"{name}.txt").read_text(encoding="utf-8").splitlines()
    return frozenset(w.lower() for line in lines if not line.lstrip().startswith("#") for w in line.split())


_ITEM_WORD = re.compile(r"[a-z]{3,}")


def item_words(text: str) -> set[str]:
    """The words of ``text`` that may name a line item: three letters or more, less the words of a question that
    name none (``resources/reader/not_items.txt``: "what", "fiscal", "round", "millions")."""
    return {w for w in _ITEM_WORD.findall(text.lower()) if w not in word_set("not_items")}


STEM = 5  # letters two forms of a word share ("operate", "operated"; "expense", "expenses")


def stems(text: str) -> set[str]:
    """The stems of the words of ``text`` (their first :data:`STEM` letters, lower case): what a question's word is
    matched against when a figure's words must say it (engine.answer.fact_formula's coverage check)."""
    return {w[:STEM] for w in re.findall(r"[a-z]+", text.lower())}
