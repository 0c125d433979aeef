"""Revisions a filing prints of its own figures: "9 percent core constant currency EPS growth (previously 8
percent)", "we raised our organic revenue growth outlook to 8% from 6%". A question asking by how much a figure was
raised or lowered ("by how many percentage points did X raise its EPS growth guidance") is answered by the engine
from such a pair: the revision whose words share most of the question's is chosen (none when two share as many),
its two figures are subtracted (percent from percent in percentage points, an amount from an amount of the same
unit), and the quote printing it is cited. No model call; no figure the model typed.

The question's markers and the filing's ("previously", "up from", "prior guidance of") are
``resources/reader/revisions.toml``'s.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from engine.answer.quotes import content_stems
from engine.records import AnswerResult, Citation, Passage, QueryIntent, Quote
from engine.settings import RESOURCES_DIR
from engine.vocab.numbers import MENTION, SCALE_EXPONENTS, scale_word

__all__ = ["Revision", "revision_answer", "revisions_in"]

_GAP = 80  # characters at most between a figure and the marker of the figure it replaced
_LEAST_SHARED = 2  # words of the question a revision's words must share to be the one asked


@dataclass(frozen=True)
class Revision:
    """A figure printed with the one it replaces: their values (scale applied), ``percent`` when both are percents,
    the words that say what was revised (the clause before the new figure), and where the pair is printed."""

    new: float
    old: float
    percent: bool
    new_printed: str
    old_printed: str
    words: str
    start: int
    end: int
    scale: str = ""  # the new figure's scale word ("billion"), "" none
    money: bool = False  # a currency mark is printed with either figure

    def size(self) -> str:
        """The change as a reader states it: in percentage points, or in the new figure's scale and currency."""
        change = abs(self.new - self.old)
        if self.percent:
            return f"{change:.6g} percentage point{'s' if round(change, 6) != 1 else ''}"
        shown = change / 10.0 ** SCALE_EXPONENTS.get(self.scale, 0)
        return f"{'$' if self.money else ''}{shown:,.6g}{' ' + self.scale if self.scale else ''}"


@lru_cache(maxsize=1)
def _markers() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The filing's words: the verbs of revising ("raised … to B from A") and the marks of the earlier figure."""
    data = tomllib.loads((RESOURCES_DIR / "reader" / "revisions.toml").read_text(encoding="utf-8"))

    def alt(forms: list[str]) -> str:
        return "|".join(f.replace(" ", r"\s+") for f in sorted(forms, key=len, reverse=True))

    verbs = re.compile(rf"\b(?:{alt(data['verbs'])})\b", re.IGNORECASE)
    previous = re.compile(rf"[(,;]?\s*\b(?:{alt(data['previous'])})\b\s*:?\s*$", re.IGNORECASE)
    return verbs, previous


def _figure(m: re.Match[str]) -> tuple[float, bool, str, str]:
    """A figure's value (its scale applied), whether it is a percent, as printed, and its scale word ("" none)."""
    scale = scale_word(m["word"] or m["abbr"] or m["letter"]) or ""
    value = float(m["num"].replace(",", "")) * 10.0 ** SCALE_EXPONENTS.get(scale, 0)
    if m["open"] and m["close"] or m["sign"] or m["sign2"]:
        value = -value
    return value, bool(m["pct"] or m["pct2"]), m.group().strip(" (),"), scale


def revisions_in(text: str) -> list[Revision]:
    """The revisions ``text`` prints: a figure followed by a marker of the earlier one and that figure ("8 percent
    (previously 6 percent)"), or a verb of revising with "from A to B" / "to B from A"."""
    verbs, previous = _markers()
    found = list(MENTION.finditer(text))
    out: list[Revision] = []
    last_end = 0
    for a, b in zip(found, found[1:]):
        between = text[a.end():b.start()]
        if len(between) > _GAP:
            continue
        new_m, old_m = a, b
        if previous.search(between):
            pass
        elif re.fullmatch(r"\s+to\s+", between) and re.search(r"\bfrom\s*$", text[:a.start()]) and verbs.search(
                text[max(0, a.start() - _GAP):a.start()]):
            new_m, old_m = b, a  # "raised … from 6% to 8%"
        elif re.fullmatch(r"\s+from\s+", between) and re.search(r"\bto\s*$", text[:a.start()]) and verbs.search(
                text[max(0, a.start() - _GAP):a.start()]):
            pass  # "raised … to 8% from 6%"
        else:
            continue
        new, new_pct, new_printed, scale = _figure(new_m)
        old, old_pct, old_printed, _ = _figure(old_m)
        if new_pct != old_pct:
            continue
        money = "$" in new_m.group() + old_m.group() or "USD" in new_m.group() + old_m.group()
        head = max(last_end, _clause_start(text, min(a.start(), b.start())))
        words = text[head:max(a.end(), b.start())]
        words = re.sub(r"^[\s,;:)]*(?:(?:and|or|but|while)\b)?[\s,]*", "", words)
        words = re.sub(r"[\s(,;]*(?:\b(?:from|to)\s*)?$", "", previous.sub("", words))
        out.append(Revision(new, old, new_pct, new_printed, old_printed, " ".join(words.split()),
                            min(a.start(), b.start()), max(a.end(), b.end()), scale, money))
        last_end = max(a.end(), b.end())
    return out


def _clause_start(text: str, at: int) -> int:
    """Where the clause holding ``at`` starts: after the last sentence end before it."""
    cut = max(text.rfind(". ", 0, at), text.rfind("; ", 0, at), text.rfind("\n\n", 0, at))
    return cut + 2 if cut >= 0 else 0


def revision_answer(intent: QueryIntent, quotes: Sequence[Quote], passages: Sequence[Passage]) -> AnswerResult | None:
    """The answer to a question asking by how much a figure was revised (``intent.revised``: what, as the reader
    read it), from the revision the quotes print whose words share most of it (module docstring); None when the
    question asks no revision, or no quote prints one that it names, or two name it as well."""
    if not intent.revised:
        return None
    asked = content_stems(intent.revised)
    scored: list[tuple[int, Revision, Quote]] = []
    for q in quotes:
        for r in revisions_in(" ".join(q.text.split())):
            scored.append((len(asked & content_stems(r.words)), r, q))
    scored.sort(key=lambda x: -x[0])
    if not scored or scored[0][0] < _LEAST_SHARED or len(scored) > 1 and scored[1][0] == scored[0][0] \
            and (scored[1][1].new, scored[1][1].old) != (scored[0][1].new, scored[0][1].old):
        return None
    _, r, q = scored[0]
    change = round(r.new - r.old, 9)
    way = "Raised" if change > 0 else "Lowered"
    text = (f"{way} by {r.size()}: {r.new_printed}, previously {r.old_printed} (“{r.words}”) [{q.number}]"
            if change else f"Left unchanged at {r.new_printed} (“{r.words}”) [{q.number}]")
    passage = passages[q.passage_id - 1]
    unit = "percentage points" if r.percent else "USD" if r.money else None
    return AnswerResult("answered", text, value=change, unit=unit, method="revision",
                        citations=(Citation.of(q.passage_id, passage),), quotes=tuple(quotes),
                        reason=f"computed by the engine from the revision quote [{q.number}] prints: "
                               f"{r.new_printed} − {r.old_printed}")
