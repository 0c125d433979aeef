"""The sections of a filing, as data (``resources/reader/sections.toml``): the items each form prints as headings,
the name a section is stored under, its kind, and which kinds a written question asks of.

Read by the section reader at ingest (:mod:`engine.ingest.sections`) and by the question reader
(:mod:`engine.intent.reader`), so a filing's headings and a question's words meet in one vocabulary.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
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
    place_words: tuple[re.Pattern[str], ...] = ()  # the asking words that only say where to look
    note_heading_kinds: tuple[tuple[re.Pattern[str], str], ...] = ()  # a note's heading words -> its kind
    alike: tuple[tuple[re.Pattern[str], ...], ...] = ()  # groups of asked words that name one subject
    cover_name: str = "Cover page"
    cover_kind: str = "cover"
    cover_pages: int = 1  # the first pages whose text before the first heading is the cover
    audit_name: str = "Auditor's Report"
    audit_kind: str = "audit"
    audit_headings: tuple[str, ...] = ()  # letters of the headings that open an auditor's report
    exhibit_forms: frozenset[str] = frozenset()  # the forms whose printed exhibits are sections
    exhibit_kinds: dict[str, str] = field(default_factory=dict)  # exhibit number ("10") -> kind
    release_markers: tuple[str, ...] = ()  # letters of the words that open a press release ("newsrelease")
    exhibit_opening: int = 400  # how many characters of an exhibit's opening are read for a marker

    @cached_property
    def title_words(self) -> frozenset[str]:
        """The words of every item's title, lower case ("management's", "discussion", "risk", "proceedings"): a
        sentence that names a section ("the factors discussed in Item 2 of Part I, “Management's Discussion and
        Analysis …”") names no party or case by them."""
        return frozenset(w.lower() for items in self.forms.values() for i in items for t in i.titles
                         for w in re.findall(r"[A-Za-z][A-Za-z'’]*", t))

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
        if section == self.cover_name:
            return self.cover_kind
        if section == self.audit_name:
            return self.audit_kind
        if section.startswith("Exhibit "):
            return self.exhibit_kinds.get(section.split()[1].split(".")[0], "exhibits")
        return _kinds_by_name(self).get(section, "")

    def exhibit_section(self, number: str, opening: str) -> str:
        """The section an exhibit printed in a report starts ("Exhibit 10.1", or "Release: Exhibit 99.1" when its
        ``opening`` text carries a release marker)."""
        said = letters(opening[: self.exhibit_opening])
        return f"Release: Exhibit {number}" if any(m in said for m in self.release_markers) else f"Exhibit {number}"

    def kinds_of(self, section: str) -> tuple[str, ...]:
        """Every kind of a stored section name: a note is also of the kinds its heading's words say ("Note 21 Legal
        Proceedings" → ("legal", "notes")); () for none."""
        return _kinds_of(self, section)

    def rank_of(self, section: str, asked: Sequence[str]) -> int | None:
        """Where a section stands among the kinds a question asks of, best first (``asked`` as
        :meth:`kinds_asked` gives them): the position of its best kind there; None when it is of none."""
        at = [asked.index(k) for k in self.kinds_of(section) if k in asked]
        return min(at) if at else None

    def kinds_asked(self, topic: str, question: str) -> tuple[str, ...]:
        """The section kinds a written question asks of, best first: its words' kinds, then its topic's."""
        out: list[str] = []
        for pattern, kinds in self.word_kinds:
            if pattern.search(question):
                out.extend(kinds)
        out.extend(self.topic_kinds.get(topic, ()))
        return tuple(dict.fromkeys(out))

    def subject_words(self, question: str) -> tuple[re.Pattern[str], ...]:
        """The words a passage or sentence names what a written question asks about with: the question's own
        [asks.words] ("acquisitions") and the words [asks.alike] groups with them ("guidance": "outlook"), and with
        one that a note heading's kind lists, every word of that kind ([notes.kinds]: "legal battles" asks of legal,
        litigation, lawsuits, contingencies); () when the question names none (its topic alone chose the sections).
        Words that only say where to look are none."""
        asked = self.without_place_words(question)
        place = {p.pattern for p in self.place_words}
        out = [rx for rx, _ in self.word_kinds if rx.pattern not in place and rx.search(asked)]
        said = {rx.pattern for rx in out}
        out += [rx for group in self.alike if said & {g.pattern for g in group} for rx in group]
        for rx, kind in self.note_heading_kinds:
            if rx.search(asked):
                out += [r for r, k in self.note_heading_kinds if k == kind]
        return tuple({rx.pattern: rx for rx in out}.values())

    def without_place_words(self, question: str) -> str:
        """``question`` without the words that only say where to look ("risks", "agenda", "what drove"): every
        sentence there is one, so they say nothing of which sentence answers. Words that also name the subject
        ("customers", "acquisitions") stay."""
        for pattern in self.place_words:
            question = pattern.sub(" ", question)
        return " ".join(question.split())


@lru_cache(maxsize=4096)
def _kinds_of(v: SectionVocab, section: str) -> tuple[str, ...]:
    # (read once per section name: the passage stage asks it of every chunk of the filings)
    kind = v.kind_of(section)
    if kind != v.note_kind:
        return (kind,) if kind else ()
    return (*dict.fromkeys(k for rx, k in v.note_heading_kinds if rx.search(section)), kind)


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
    place = asks.pop("place_words", {})
    words = asks.pop("words", {})
    alike = [tuple(group) for group in asks.pop("alike", {}).get("groups", [])]
    if unknown := sorted({w for group in alike for w in group} - set(words)):
        raise ValueError(f"sections.toml [asks.alike] groups words that [asks.words] does not list: {unknown}")
    return SectionVocab(
        forms=forms, note_kind=heads["note_kind"], release_kind=heads["release_kind"],
        cover_name=heads["cover_name"], cover_kind=heads["cover_kind"], cover_pages=int(heads["cover_pages"]),
        audit_name=heads["audit_name"], audit_kind=heads["audit_kind"],
        audit_headings=tuple(letters(h) for h in heads["audit_headings"]),
        release_forms=frozenset(f.upper() for f in heads["release_forms"]),
        exhibit_forms=frozenset(f.upper() for f in data["exhibits"]["forms"]),
        exhibit_kinds={str(k): v for k, v in data["exhibits"]["kinds"].items()},
        release_markers=tuple(letters(m) for m in data["exhibits"]["release_markers"]),
        exhibit_opening=int(data["exhibits"]["opening_chars"]),
        not_headings=tuple(heads["not_headings"]),
        topic_kinds={k: tuple(v) for k, v in asks.items()},
        word_kinds=tuple((_word_start(w), tuple(k)) for w, k in {**place, **words}.items()),
        place_words=tuple(_word_start(w) for w in place),
        note_heading_kinds=tuple((_word_start(w), kind) for kind, ws in data["notes"]["kinds"].items() for w in ws),
        alike=tuple(tuple(_word_start(w) for w in group) for group in alike),
    )


def _word_start(words: str) -> re.Pattern[str]:
    """A vocabulary entry matched at a word's start ("acqui": acquisition, acquired), case ignored."""
    return re.compile(r"\b" + re.escape(words) + r"[\w-]*", re.IGNORECASE)


@lru_cache(maxsize=1)
def vocab() -> SectionVocab:
    return _read(tomllib.loads((RESOURCES_DIR / "reader" / "sections.toml").read_text(encoding="utf-8")))
