"""Counts as people read them: "1 page", "2 pages", "1 input" (every label, status line and summary uses it)."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and the noun in the number it takes: the noun as given for one, ``plural`` (default: noun + "s")
    otherwise. Thousands are grouped ("1,204 pages")."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"
