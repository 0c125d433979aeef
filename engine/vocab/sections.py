"""The sections of a filing, as data (``resources/reader/sections.toml``): the items each form prints as headings,
the name a section is stored under, its kind, and which kinds a written question asks of.

Read by the section reader at ingest (:mod:`engine.ingest.sections`) and by the question reader
(:mod:`engine.intent.reader`), so a filing's headings and a question's words meet in one vocabulary.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from engine.settings import RESOURCES_DIR

__all__ = ["Item", "SectionVocab", "letters", "vocab"]


def letters(text: str) -> str:
    """Lower-case letters only: headings are compared this way (a PDF's "Busines s." is "business")."""
    return re.sub(r"[^a-z]", "", text.lower())


@dataclass(frozen=True)
class Item:
    item: str  # as printed after "Item": "1A", "2.02"
    titles: tuple[str, ...]
    name: str  # stored with the chunks: "Item 1A Risk Factors"
    kind: str

    @property
    def title_letters(self) -> tuple[str, ...]:
        return tuple(letters(t) for t in self.titles)


@dataclass(frozen=True, eq=False)  # hashed by identity: one vocabulary, read once
class SectionVocab:
    forms: dict[str, tuple[Item, ...]]
    note_kind: str
    release_kind: str
    release_forms: frozenset[str]
    not_headings: tuple[str, ...]
    topic_kinds: dict[str, tuple[str, ...]]
    word_kinds: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...]

    def items(self, form: str | None) -> tuple[Item, ...]:
        """The items a filing of ``form`` prints ("10-K/A" reads as "10-K"); none for a form without items."""
        f = (form or "").upper()
        return self.forms.get(f) or self.forms.get(f.split("/")[0]) or ()

    def kind_of(self, section: str) -> str:
        """The kind of a stored section name ("Item 1A Risk Factors" → "risk"); "" for none."""
        if not section:
            return ""
        if section.startswith("Note ") or section == "Notes to Financial Statements":
            return self.note_kind
        if section.startswith("Release"):
            return self.release_kind
        return _kinds_by_name(self).get(section, "")

    def kinds_asked(self, topic: str, question: str) -> tuple[str, ...]:
        """The section kinds a written question asks of, best first: its words' kinds, then its topic's."""
        out: list[str] = []
        for pattern, kinds in self.word_kinds:
            if pattern.search(question):
                out.extend(kinds)
        out.extend(self.topic_kinds.get(topic, ()))
        return tuple(dict.fromkeys(out))


    def without_asking_words(self, question: str) -> str:
        """``question`` without the words that asked for sections ("risks", "agenda"): they chose where to look and
        say nothing of which sentence there answers."""
        for pattern, _ in self.word_kinds:
            question = pattern.sub(" ", question)
        return " ".join(question.split())


@lru_cache(maxsize=4)
def _kinds_by_name(v: SectionVocab) -> dict[str, str]:
    return {i.name: i.kind for items in v.forms.values() for i in items}


def _read(data: dict[str, Any]) -> SectionVocab:
    forms: dict[str, tuple[Item, ...]] = {}
    for block in data["form"]:
        items = tuple(Item(str(i["item"]).upper(), tuple(i["titles"]), i["name"], i["kind"]) for i in block["items"])
        for form in block["forms"]:
            forms[form.upper()] = items
    heads = data["headings"]
    asks = dict(data["asks"])
    words = asks.pop("words", {})
    return SectionVocab(
        forms=forms, note_kind=heads["note_kind"], release_kind=heads["release_kind"],
        release_forms=frozenset(f.upper() for f in heads["release_forms"]),
        not_headings=tuple(heads["not_headings"]),
        topic_kinds={k: tuple(v) for k, v in asks.items()},
        word_kinds=tuple((re.compile(r"\b" + re.escape(w) + r"[\w-]*", re.IGNORECASE), tuple(k))
                         for w, k in words.items()),
    )


@lru_cache(maxsize=1)
def vocab() -> SectionVocab:
    return _read(tomllib.loads((RESOURCES_DIR / "reader" / "sections.toml").read_text(encoding="utf-8")))
