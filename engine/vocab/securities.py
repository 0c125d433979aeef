"""The classes of registered securities, as data (``resources/reader/securities.toml``): which class a cover page's
registered title is ("1.500% Notes due 2026" is debt) and which classes a question asks of ("which debt securities
are registered"). One vocabulary for the filing's words and the question's, as :mod:`engine.vocab.sections` is
for headings.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache

from engine.settings import RESOURCES_DIR

__all__ = ["SecurityClass", "asked_classes", "class_of", "classes"]


@dataclass(frozen=True)
class SecurityClass:
    name: str  # "debt"
    label: str  # as an answer names it: "debt securities"
    title: re.Pattern[str]  # its words in a registered title
    asked: re.Pattern[str]  # its words in a question


def _words(words: list[str]) -> re.Pattern[str]:
    # whole words, a plural too ("note" matches "Notes"; "debt securities" is written whole)
    alternatives = "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in sorted(words, key=len, reverse=True))
    return re.compile(rf"\b(?:{alternatives})(?:s|es)?\b", re.IGNORECASE)


@lru_cache(maxsize=1)
def classes() -> tuple[SecurityClass, ...]:
    """The classes in the file's order (a title takes the first that names it)."""
    with open(RESOURCES_DIR / "reader" / "securities.toml", "rb") as fh:
        data = tomllib.load(fh)
    return tuple(SecurityClass(c["name"], c["label"], _words(c["title"]), _words(c["asked"]))
                 for c in data["classes"])


def class_of(title: str) -> str | None:
    """The class of a registered title ("Common Stock, Par Value $.01 Per Share": common); None: no class word."""
    return next((c.name for c in classes() if c.title.search(title)), None)


def asked_classes(question: str) -> tuple[str, ...]:
    """The classes a question names ("which debt securities": debt); () when it names none (it asks of all)."""
    return tuple(c.name for c in classes() if c.asked.search(question))
