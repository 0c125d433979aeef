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
from collections.abc import Sequence
from dataclasses import dataclass

from engine.answer.quotes import candidate_sentences, content_stems
from engine.intent.shape import revision_words
from engine.records import AnswerResult, Citation, Passage, QueryIntent, Quote
from engine.vocab.numbers import MENTION, SCALE_EXPONENTS, scale_word

__all__ = ["Revision", "replacements_in", "revision_answer", "revisions_in"]

_GAP = 80  # characters at most between a figure and the marker of the figure it replaced
_LEAST_SHARED = 2  # words of the question a revision's words must share to be the one asked
_MARKER_GAP = 90  # characters at most between an instrument's amount and the word marking it ended or begun
_INSTRUMENT_WORDS = 10  # words at most of an instrument's name after its amount
_UNSAID = 1  # words of a replaced instrument's name the question may leave out ("unsecured")


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
        digits = f"{shown:,.0f}" if shown >= 1000 and round(shown, 6).is_integer() else f"{shown:,.6g}"
        return f"{'$' if self.money else ''}{digits}{' ' + self.scale if self.scale else ''}"


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
    verbs, previous = revision_words().verbs, revision_words().previous
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


def replacements_in(sentences: Sequence[str]) -> list[tuple[Revision, int]]:
    """The instruments ``sentences`` print as replaced by a new one of the same name, each with its amount ("terminated
    the $3,800,000,000 five year … credit agreement", "entered into a new $4,200,000,000 five year … credit agreement"):
    a revision of the amount, with the index of the sentence printing the new one. An instrument's name is the words
    after its amount (up to ``instrument_end``); it is ended or begun by the nearest marker before the amount in its
    sentence. Two new ones or two ended of one name make no pair."""
    vocab = revision_words()
    ended, began, stop = vocab.ended, vocab.began, vocab.instrument_end
    seen: dict[str, dict[str, list[tuple[float, str, int]]]] = {}
    for n, sentence in enumerate(sentences):
        for m in MENTION.finditer(sentence):
            if not (m["cur0"] or m["cur"] or m["tail"]) or m["pct"] or m["pct2"]:
                continue
            before = sentence[max(0, m.start() - _MARKER_GAP):m.start()]
            marks = [(x.end(), "old") for x in ended.finditer(before)] + [(x.end(), "new") for x in began.finditer(before)]
            if not marks:
                continue
            side = max(marks)[1]
            after = sentence[m.end():]
            cut = stop.search(after)
            name = " ".join(re.findall(r"[A-Za-z0-9][\w-]*", after[:cut.start() if cut else len(after)])[
                :_INSTRUMENT_WORDS]).lower()
            name = re.sub(r"^(?:new|prior|previous|existing|former)\s+", "", name)
            if len(name.split()) < 2:
                continue
            value, _, printed, _ = _figure(m)
            seen.setdefault(name, {}).setdefault(side, []).append((value, printed, n))
    out = []
    for name, sides in seen.items():
        # (one amount printed twice, as overlapping passages print a sentence, is one instrument)
        olds, news = ({v: (v, p, n) for v, p, n in sides.get(k, [])} for k in ("old", "new"))
        if len(olds) != 1 or len(news) != 1:
            continue
        ((old, old_printed, _),), ((new, new_printed, at),) = olds.values(), news.values()
        out.append((Revision(new, old, False, new_printed, old_printed, name, 0, 0, "", True), at))
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
    if not scored:  # an instrument replaced by a new one of the same name, printed in the passages' sentences
        found = _replaced(passages, asked, intent.question)
        if found is not None:
            return found
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


def _replaced(passages: Sequence[Passage], asked: set[str], question: str) -> AnswerResult | None:
    """The answer from the instrument the passages print as replaced (:func:`replacements_in`, over each filing's
    sentences in their order) whose name shares most of the question's words and has at most ``_UNSAID`` words it does
    not print; None when none or two share as many."""
    words = set(re.findall(r"[a-z0-9]+", question.lower()))
    by_doc: dict[str, list[tuple[int, int, int]]] = {}  # doc -> (passage number, start, end), in the filing's order
    for n, p in enumerate(passages, start=1):
        by_doc.setdefault(p.chunk.doc_name, []).extend((n, a, b) for a, b in candidate_sentences(p))
    scored: list[tuple[int, Revision, int]] = []
    for units in by_doc.values():
        units.sort(key=lambda u: (passages[u[0] - 1].chunk.char_start + u[1]))
        sentences = [" ".join(passages[n - 1].chunk.text[a:b].split()) for n, a, b in units]
        for r, at in replacements_in(sentences):
            # (a name with words the question does not say is another instrument: "364 day" for "five year")
            if len(set(re.findall(r"[a-z0-9]+", r.words)) - words) <= _UNSAID:
                scored.append((len(asked & content_stems(r.words)), r, units[at][0]))
    scored.sort(key=lambda x: -x[0])
    if not scored or scored[0][0] < _LEAST_SHARED or len(scored) > 1 and scored[1][0] == scored[0][0]:
        return None
    _, r, n = scored[0]
    change = round(r.new - r.old, 9)
    way = "Raised" if change > 0 else "Lowered" if change < 0 else "Left unchanged"
    text = (f"{way} by {r.size()}: the new {r.words} of {r.new_printed} replaced the one of {r.old_printed} [{n}]"
            if change else f"{way}: the new {r.words} is of {r.new_printed}, as was the one it replaced [{n}]")
    return AnswerResult("answered", text, value=change, unit="USD", method="revision",
                        citations=(Citation.of(n, passages[n - 1]),),
                        reason=f"computed by the engine from the amounts the filing prints of the {r.words} ended "
                               f"and of the new one: {r.new_printed} − {r.old_printed}")
