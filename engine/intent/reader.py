"""The question reader: the words of a numeric question turned into a typed metric plan, or the words it could not
read.

Three steps, each over data that is reviewed like code:

1. **Tagging.** Every word of the question gets its kinds: a metric or line item of the lexicon
   (``resources/lexicon.toml``), a word of the reader's vocabulary (``resources/reader/vocabulary.toml``: operators,
   operations over years, qualifiers, frame words), a year, a company the library knows, a unit. A word can be of
   several kinds ("less": a minus or a "least"); a word of no kind is *not read*.
2. **Segmentation.** The definitions the question writes ("define X as …", "X is defined as …", "X = …", "where
   X = …", "X: …", "X (A / B)", "computing it as …") are cut out, each a name and an expression; the asked metric
   is what is left of the question's asked sentences once the frame (company, periods, units, instructions,
   question words) is set aside.
3. **Parsing.** The asked metric and each definition's expression are parsed with the grammar
   (``resources/reader/metric.lark``, lark's Earley parser, so the parse decides what an ambiguous word is). The
   parse is a :class:`~engine.records.PlanNode` tree: a metric of the catalogue is its formula (a definition the
   question writes for it replaces it there, and only there, also inside another metric's formula), a name the
   question defines is its definition.

The plan is complete only when every word of the asked metric and of its definitions is accounted for; its unit
follows from dimensional analysis of the tree (USD / USD is a ratio, × 100 a percentage, 365 × USD / USD days), so
an asked unit the expression cannot have ("in USD millions" for a ratio) is never printed. Why lark: an Earley
parser takes an ambiguous grammar over ambiguous words as it is written, the grammar stays a file, and the library
is pure Python with no dependencies.
"""

from __future__ import annotations

import ast
import difflib
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import TYPE_CHECKING

from lark import Lark, Token, Transformer
from lark.exceptions import LarkError, VisitError

from engine.intent.issuers import issuer_spans
from engine.intent.periods import period_spans
from engine.intent.shape import core_question, is_numeric, judges_its_number, which_way
from engine.intent.topics import names_a_geography
from engine.intent.wordlists import word_list
from engine.records import AnswerResult, IssuerRef, MetricPlan, PlanNode, QueryIntent
from engine.settings import RESOURCES_DIR
from engine.vocab.lexicon import lexicon_spans, split_metric_spans
from engine.vocab.numbers import SCALE_FACTORS

if TYPE_CHECKING:
    from engine.vocab.catalogue import Catalogue

__all__ = ["Dimension", "asked_years", "asks_a_number", "dimension_of", "finish_plan", "is_relation", "item_names",
           "metric_node", "plan_words", "read_plan", "tree_of_formula", "unread_answer", "unread_words"]

_READER = RESOURCES_DIR / "reader"
_STRUCTURAL = ("DIV", "TIMES", "PLUS", "MINUS", "LPAR", "RPAR", "PCT", "MARGIN", "RATIO", "OF", "AS", "TO", "AND",
               "AVG", "CHANGE", "GROWTH", "CAGR", "YOY", "SUM", "ONE", "NYEAR", "DIFF")
_FRAME = frozenset({"FILLER", "QUALIFIER", "COMPANY", "PERIOD", "UNIT", "STATEMENT", "NAME"})
_SOFT = frozenset({"OF", "AND", "TO", "AS", "EQ", "USING", "DEFINE", "WHICH", "SUM", "OR", "COMMA", "YOY", "DIV"})


@dataclass
class _Tok:
    start: int
    end: int
    text: str
    kinds: frozenset[str]
    value: str = ""  # METRIC: the metric; YEAR: the year; NUMBER: the number; COMPANY: the key

    @property
    def pure_frame(self) -> bool:
        return bool(self.kinds) and self.kinds <= _FRAME

    def render(self) -> str:
        if "METRIC" in self.kinds:
            return f"<m:{self.value.replace(' ', '_')}>"
        if "NUMBER" in self.kinds:
            return f"<n:{self.value}>"
        if "YEARS" in self.kinds:
            return f"<y:{self.value}>"
        if "DEFINED_REF" in self.kinds:
            return f"<d:{self.value}>"
        text = self.text.lower()
        return " ".join((text if text in ("-", "–") else text.replace("-", " ")).split())


# --- the vocabulary and the grammar ------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _vocabulary() -> dict[str, re.Pattern[str]]:
    data = tomllib.loads((_READER / "vocabulary.toml").read_text(encoding="utf-8"))
    out = {}
    for kind, spec in data.items():
        forms = sorted(spec["forms"], key=len, reverse=True)
        out[kind] = re.compile("|".join(_bounded(f.replace(" ", r"[\s-]+")) for f in forms), re.IGNORECASE)
    return out


def _bounded(form: str) -> str:
    """A form that starts (ends) with a letter or digit matches only at a word's start (end); "%", ":", "(" anywhere."""
    head = r"(?<![\w$%])" if re.match(r"[\w(]", form) and not form.startswith("(?<") else ""
    tail = r"(?![\w%])" if re.search(r"[\w)?+*]$", form) and not form.endswith((r"\)", r"\*", r"\+")) else ""
    return f"{head}(?:{form}){tail}"


@lru_cache(maxsize=1)
def _bare() -> dict[str, re.Pattern[str]]:
    """resources/reader/bare.toml: the bare nouns that name a metric when they are the whole of what is asked."""
    return _bare_table("nouns")


@lru_cache(maxsize=1)
def _verbs() -> dict[str, re.Pattern[str]]:
    """resources/reader/bare.toml [verbs]: the verbs that name a metric in a question that names none."""
    return _bare_table("verbs")


def _bare_table(table: str) -> dict[str, re.Pattern[str]]:
    data = tomllib.loads((_READER / "bare.toml").read_text(encoding="utf-8"))[table]
    for forms in data.values():
        if any(re.search(r"\(\?<?[=!]", f) for f in forms):
            raise ValueError(f"bare.toml: a form with a lookaround: {forms}")
    return {name: re.compile("|".join(_bounded(f.replace(" ", r"[\s-]+")) for f in forms), re.IGNORECASE)
            for name, forms in data.items()}


@lru_cache(maxsize=1)
def _parser() -> Lark:
    grammar = (_READER / "metric.lark").read_text(encoding="utf-8")
    data = tomllib.loads((_READER / "vocabulary.toml").read_text(encoding="utf-8"))
    used = set(re.findall(r"\b([A-Z][A-Z_]+)\b", grammar)) - {"METRIC", "NUMBER", "YEARS", "DEFINED_REF"}
    for kind in sorted(used & set(data)):
        forms = sorted(data[kind]["forms"], key=len, reverse=True)
        body = "|".join(f.replace(" ", r"\s+").replace("/", r"\/") for f in forms)
        grammar += f"\n{kind}: /(?:{body})(?![a-z])/i"
    return Lark(grammar, start="phrase", parser="earley", lexer="dynamic", ambiguity="resolve")


# --- tagging -----------------------------------------------------------------------------------------------

_YEAR = re.compile(r"(?<![\w$.,])(?:fy\s?'?|fiscal\s+(?:year\s+)?'?)?((?:19[89]|20\d)\d|(?<=fy)\d\d|(?<=fy\s)\d\d|"
                   r"(?<=')\d\d)(?![\d%]|[.,]\d|\s*(?:%|percent|million|billion|thousand|bn|mn)\b)", re.IGNORECASE)
_UNIT = re.compile(r"\(?\s*(?:in\s+)?(?:units\s+of\s+)?(?:usd|us\$|\$)\s*(?:in\s+)?(?:millions?|billions?|thousands?)"
                   r"\s*\)?|\(?\s*in\s+(?:usd\s+)?(?:millions?|billions?|thousands?)(?:\s+of\s+(?:us\s+)?dollars)?\s*\)?"
                   r"|\b(?:millions?|billions?|thousands?)\s+of\s+(?:us\s+)?dollars|\(?\s*in\s+(?:units\s+of\s+)?"
                   r"(?:percents?|percentage|%|days|times)\s*\)?|\bunits\s+of\s+percents?\b|\bpercentage\s+points?\b"
                   r"|\(?\s*\bas\s+an?\s+(?:%|percent(?:age)?\b)(?!\s*(?:of|to)\b)\s*\)?",
                   re.IGNORECASE)
_ROUND = re.compile(r"\b(?:round(?:ed)?|rounding)\b[^.?;]*?(?:decimal(?:\s+(?:places?|points?|digits?)|s)?|"
                    r"whole\s+number|integer|nearest\s+\w+)|\bto\s+(?:\w+\s+)?decimal\s+places?", re.IGNORECASE)
# "2x": the number, then "x" (times); "300bn": the number, then its scale
_NUMBER = re.compile(r"(?<![\w.])\d+(?:,\d{3})*(?:\.\d+)?(?=(?:x|bn|mn|mm|k|m|b)\b|(?![\w]))", re.IGNORECASE)
# a scale written after a number ("400 billion", "2.5bn", "$300m"): the number is that many units of it
_SCALE_AFTER = re.compile(r"(?:\s*(thousand|million|billion|trillion)s?|\s?(bn|mn|mm)|(k|m|b))\b", re.IGNORECASE)
_SCALE_WORDS = {"thousand": "thousands", "k": "thousands", "million": "millions", "mn": "millions", "mm": "millions",
                "m": "millions", "billion": "billions", "bn": "billions", "b": "billions", "trillion": "trillions"}
_WORD = re.compile(r"[A-Za-z][A-Za-z&'’./-]*[A-Za-z]|[A-Za-z]|[()\[\]/%=:+×÷*,?.;!–—-]")
_BOUNDARY = frozenset({"?", ".", ";", "!"})
_TIMES_ASKED = re.compile(r"\bhow many times\b|\bwhat multiple\b|\bby what multiple\b", re.IGNORECASE)
_IN_DAYS = re.compile(r"\bhow many days\b|\b(?:in|number of) days\b|\bdays (?:did|does|do|would|will) it take\b",
                      re.IGNORECASE)
_ABBREVIATION = re.compile(r"(?:\b(?:[A-Za-z]\.)+[A-Za-z]|\b(?:Inc|Corp|Co|Ltd|vs|No|St|approx))$")


def _tag(text: str, issuers: Sequence[IssuerRef]) -> list[_Tok]:
    """Every word of ``text`` with its kinds; spans claimed in order: companies, units and rounding, periods, then
    the longest of the lexicon's metrics and the vocabulary's words."""
    taken = [False] * len(text)
    toks: list[_Tok] = []

    def claim(start: int, end: int, kinds: frozenset[str], value: str = "") -> None:
        if end > start and not any(taken[start:end]):
            toks.append(_Tok(start, end, text[start:end], kinds, value))
            for i in range(start, end):
                taken[i] = True

    for start, end, key in issuer_spans(text, issuers):
        claim(start, end + (2 if re.match(r"['’]s\b", text[end:end + 3]) else 0), frozenset({"COMPANY"}), key)
    for m in _UNIT.finditer(text):
        claim(m.start(), m.end(), frozenset({"UNIT"}))
    for m in _ROUND.finditer(text):
        claim(m.start(), m.end(), frozenset({"UNIT"}))
    for start, end in period_spans(text):
        claim(start, end, frozenset({"PERIOD"}))
    for m in _YEAR.finditer(text):
        year = int(m[1]) if len(m[1]) == 4 else 2000 + int(m[1])
        claim(m.start(), m.end(), frozenset({"YEAR"}), str(year))
    # a metric named in two pieces around the question's frame ("cash did Acme generate from operations"): its
    # first piece is the metric, the rest read with it
    for metric, pieces in split_metric_spans(text):
        if not any(any(taken[a:b]) for a, b in pieces):
            claim(*pieces[0], frozenset({"METRIC"}), metric)
            for a, b in pieces[1:]:
                claim(a, b, frozenset({"FILLER"}))
    # the longest of a lexicon metric and a vocabulary word wins where they overlap
    spans: list[tuple[int, int, frozenset[str], str]] = []
    for name, start, end in lexicon_spans(text):
        spans.append((start, end, frozenset({"METRIC"} if name else {"STATEMENT"}), name or ""))
    for name, quality in _qualities().items():  # "capital-intensive": a judgement that names its own metric
        spans += [(m.start(), m.end(), frozenset({"QUALITY"}), name) for m in quality.forms.finditer(text)]
    for times, rx in _multiples():  # "double", "more than triple", "halved": a multiple of the earlier value
        spans += [(m.start(), m.end(), frozenset({"MULTIPLE"}), times) for m in rx.finditer(text)]
    by_span: dict[tuple[int, int], set[str]] = {}
    for kind, rx in _vocabulary().items():
        for m in rx.finditer(text):
            by_span.setdefault((m.start(), m.end()), set()).add(kind)
    spans += [(a, b, frozenset(k), "") for (a, b), k in by_span.items()]
    for m in _NUMBER.finditer(text):
        value = m[0].replace(",", "")
        if scaled := _SCALE_AFTER.match(text, m.end()):  # "$400 billion", "$2.5bn": the amount in dollars
            factor = SCALE_FACTORS[_SCALE_WORDS[scaled[scaled.lastindex or 1].lower()]]
            spans.append((m.start(), m.end(), frozenset({"NUMBER", "AMOUNT"}), repr(float(value) * factor)))
            continue
        spans.append((m.start(), m.end(), frozenset({"NUMBER"} | ({"ONE"} if float(value) == 1 else set())), value))
    for start, end, kinds, value in sorted(spans, key=lambda s: (-(s[1] - s[0]), "METRIC" not in s[2], s[0])):
        if not any(taken[start:end]):
            # a word of several kinds: every kind whose form matches exactly this span
            all_kinds = set(kinds) | by_span.get((start, end), set())
            claim(start, end, frozenset(all_kinds), value)
    # the vocabulary's words in what is left: a longer form that lost its span to a metric ("how many days" beside
    # "days of inventory") leaves a shorter one ("how many")
    masked = "".join("\0" if taken[k] else ch for k, ch in enumerate(text))
    left: dict[tuple[int, int], set[str]] = {}
    for kind, rx in _vocabulary().items():
        for m in rx.finditer(masked):
            if m.end() > m.start():
                left.setdefault((m.start(), m.end()), set()).add(kind)
    for (start, end), found in sorted(left.items(), key=lambda s: (s[0][0] - s[0][1], s[0][0])):
        claim(start, end, frozenset(found))
    for name, rx in _bare().items():  # "cash", "equity": a metric only when it is all that is asked (read_plan)
        for m in rx.finditer(text):
            claim(m.start(), m.end(), frozenset({"BARE"}), name)
    for m in _WORD.finditer(text):
        end = m.end()
        if any(taken[m.start():end]) and not taken[m.start()]:  # "Microsoft's" whose "'s" is claimed: "Microsoft"
            end = taken.index(True, m.start())
            while end > m.start() and not text[end - 1].isalnum():
                end -= 1
        if end > m.start() and not any(taken[m.start():end]):
            word = text[m.start():end]
            if word == "." and _ABBREVIATION.search(text[:m.start()]):
                claim(m.start(), m.end(), frozenset({"FILLER"}))  # "U.S.", "Inc.": not a sentence's end
                continue
            kind = ("BOUNDARY" if word in _BOUNDARY else "COMMA" if word == "," else
                    "NAME" if word[0].isupper() and m.start() > 0 and not _sentence_start(text, m.start())
                    else "WORD")
            claim(m.start(), end, frozenset({kind}))
    return sorted(toks, key=lambda t: t.start)


def _names_of_parts(toks: list[_Tok], text: str) -> list[str]:
    """Names the question gives a part of the company, written in capitals beside the metric ("Microsoft's Intelligent
    Cloud revenue", "Acme's revenue from Jordan Brand", "net sales in Greater Asia"): each of their words made scope
    (a capitalised word is otherwise frame: a company's name the library does not know), and the names returned. Only
    where the company is named otherwise (a library company's name, or a name with a possessive): in "the payout
    ratio for Acme", "Acme" may be the company itself."""
    runs: list[tuple[int, int]] = []
    i = 0
    while i < len(toks):
        if toks[i].kinds != {"NAME"}:
            i += 1
            continue
        j = i
        while j + 1 < len(toks) and toks[j + 1].kinds == {"NAME"} and toks[j + 1].start - toks[j].end <= 1:
            j += 1
        runs.append((i, j))
        i = j + 1

    def possessive(j: int) -> bool:
        return re.match(r"['’](?:s\b|(?=\s))", text[toks[j].end:]) is not None or (
            j + 1 < len(toks) and toks[j + 1].text in ("'s", "’s"))

    if not any("COMPANY" in t.kinds for t in toks) and not any(possessive(j) for _, j in runs):
        return []
    out: list[str] = []
    for i, j in runs:
        after = toks[j + 1] if j + 1 < len(toks) else None
        # the metric just before, across the frame's words that end in a preposition ("revenue in", "net sales came
        # from the", "revenue attributable to")
        k = i - 1
        while k >= 0 and toks[k].text.lower() in ("the", "its", "their"):
            k -= 1
        linked = k >= 0 and toks[k].kinds <= _FRAME | _SOFT and \
            toks[k].text.lower().split()[-1] in _PART_PREPOSITIONS
        while linked and k >= 0 and toks[k].kinds <= _FRAME | _SOFT and i - k <= 4:
            k -= 1
        beside = (after is not None and "METRIC" in after.kinds) or (linked and k >= 0 and "METRIC" in toks[k].kinds)
        if beside and not possessive(j) and not _CURRENCY.match(text, toks[j].end):
            for x in toks[i:j + 1]:
                x.kinds = frozenset({"SCOPE"})
            out.append(text[toks[i].start:toks[j].end])
    return out


_PART_PREPOSITIONS = frozenset({"in", "from", "for", "of", "at", "by", "to"})
_CURRENCY = re.compile(r"\.?\s*dollars?\b", re.IGNORECASE)  # after a name: "U.S. dollars" is a currency, no part


def _sentence_start(text: str, pos: int) -> bool:
    before = text[:pos].rstrip()
    return not before or before[-1] in ".?!:;\"“("


# --- segmentation ------------------------------------------------------------------------------------------


def _sentences(toks: list[_Tok]) -> list[list[_Tok]]:
    out: list[list[_Tok]] = [[]]
    for t in toks:
        if "BOUNDARY" in t.kinds and t.text in "?.;!":
            out[-1].append(t)
            out.append([])
        else:
            out[-1].append(t)
    return [s for s in out if any("BOUNDARY" not in t.kinds for t in s)]


@dataclass
class _Definition:
    subject: list[_Tok]
    expression: list[_Tok]
    text: str


_STRONG_EQ = frozenset({"=", ":", "equals", "equal", "is equal to", "means"})


def _subject_before(sent: list[_Tok], i: int) -> list[_Tok]:
    """The name a definition cue at ``i`` defines: the run of metric, qualifier, scope and unread words before it."""
    j = i
    while j > 0 and (sent[j - 1].kinds & {"METRIC", "WORD", "SCOPE", "NAME", "QUALIFIER", "PCT", "MARGIN",
                                          "RATIO", "AVG", "CHANGE", "GROWTH", "YOY", "DEFINED_REF", "ASPECT"}) and \
            not sent[j - 1].kinds & {"COMPANY"} and not sent[j - 1].text.lower() in ("the", "a", "an"):
        j -= 1
    return sent[j:i]


def _clause_end(expression: list[_Tok]) -> list[_Tok]:
    """A definition's expression up to a comma that opens the question ("…, defined as DIO plus DSO minus DPO,
    what was its CCC in FY2023?"): a comma followed by a question word or an instruction ends it."""
    for k, t in enumerate(expression[:-1]):
        after = expression[k + 1]
        if "COMMA" in t.kinds and (after.kinds & {"WHICH", "DEFINE"} or after.text.lower().startswith("how")):
            return expression[:k]
    return expression


def _definitions(sent: list[_Tok]) -> tuple[list[_Definition], set[int]]:
    """The definitions one sentence writes and the positions (in ``sent``) they take up."""
    found: list[_Definition] = []
    used: set[int] = set()
    cues: list[tuple[int, int, str]] = []  # (position of the cue, where the expression starts, form)
    for i, t in enumerate(sent):
        low = " ".join(t.text.lower().split())
        if "DEFINED" in t.kinds and not low.startswith(("with", "which", "where")):
            cues.append((i, i + 1, "defined"))
        elif low in _STRONG_EQ or (low == "as" and any("DEFINE" in s.kinds for s in sent[max(0, i - 8):i])):
            cues.append((i, i + 1, low))
        elif low in ("is", "are") and i > 0 and any(s.text.lower() == "where" for s in sent[max(0, i - 6):i]):
            cues.append((i, i + 1, "is"))
    # a ratio written by its roles ("using X as the numerator and Y as the denominator"): a definition of the asked
    # metric, from the word that opens it ("using", "with", a parenthesis or a comma) to its second role
    roles = [i for i, t in enumerate(sent) if t.kinds & {"NUMERATOR", "DENOMINATOR"}]
    if len(roles) == 2 and sent[roles[0]].kinds != sent[roles[1]].kinds:
        start = roles[0]
        while start > 0 and not sent[start - 1].kinds & {"USING", "DEFINE", "LPAR", "COMMA", "DEFINED"}:
            start -= 1
        opened = max(start - 1, 0)
        found.append(_Definition([], sent[start:roles[1] + 1],
                                 " ".join(t.text for t in sent[opened:roles[1] + 1]).strip(" ,(")))
        used.update(range(opened, roles[1] + 1))
        cues = [c for c in cues if not opened <= c[0] <= roles[1]]
    merged: list[tuple[int, int, str]] = []
    for cue in cues:  # "is defined as:" is one cue
        if merged and cue[0] == merged[-1][1]:
            merged[-1] = (merged[-1][0], cue[1], merged[-1][2])
        else:
            merged.append(cue)
    cues = merged
    for n, (i, start, form) in enumerate(cues):
        if i in used:
            continue
        subject = _subject_before(sent, i)
        # an aside between commas ("has its leverage, measured by debt to equity, gone up"): it defines the name
        # before it, which stays in the question, and ends at its closing comma
        aside = not subject and form == "defined" and i > 1 and "COMMA" in sent[i - 1].kinds
        closing = next((k for k in range(i + 1, len(sent) - 1) if "COMMA" in sent[k].kinds), None)
        if closing is None or sent[closing + 1].kinds & {"WHICH", "DEFINE"} or \
                sent[closing + 1].text.lower().startswith("how"):
            aside = False  # ("Acme's CCC, defined as …, what was it": the question opens after it)
        if aside:  # (the company's name before it is the frame's)
            subject = [t for t in _subject_before(sent, i - 1) if not t.pure_frame]
        if form == "as":  # "define X as", "taking X as", "computing it as"
            k = max(k for k in range(max(0, i - 8), i) if "DEFINE" in sent[k].kinds)
            subject = sent[k + 1:i]
            first = k
        elif aside:
            first = i - 1
        else:
            first = i - len(subject)
            if first > 0 and sent[first - 1].text.lower() == "where":
                first -= 1
        if not subject and form not in ("as", "defined"):
            continue
        end = cues[n + 1][0] - len(_subject_before(sent, cues[n + 1][0])) if n + 1 < len(cues) else len(sent)
        expression = _clause_end(sent[start:end])
        if aside and (close := next((k for k, t in enumerate(expression) if "COMMA" in t.kinds), None)):
            expression = expression[:close + 1]
        end = start + len(expression)
        while expression and (expression[-1].kinds & {"BOUNDARY", "COMMA"} or expression[-1].text.lower() in
                               ("and", "where")):
            expression = expression[:-1]
        if not expression or all(t.kinds <= _FRAME | _SOFT | {"BOUNDARY", "CHANGE", "YEAR", "YEARS"} for t in expression):
            continue  # "revenue: FY2023 versus FY2022": periods set side by side after a name define nothing
        found.append(_Definition(subject, expression, " ".join(t.text for t in sent[first:end]
                                                               if "BOUNDARY" not in t.kinds).strip(" ,")))
        used.update(range(first, end))
    # "X (A / B)": a parenthesis that writes arithmetic right after a name
    for i, t in enumerate(sent):
        if i in used or "LPAR" not in t.kinds:
            continue
        close = next((k for k in range(i + 1, len(sent)) if "RPAR" in sent[k].kinds), None)
        inner = sent[i + 1:close] if close is not None else []
        subject = _subject_before(sent, i)
        if close is None or not subject or not any(s.kinds & {"DIV", "TIMES", "PLUS", "MINUS"} for s in inner) \
                or used & set(range(i, close + 1)):
            continue
        if inner and "USING" in inner[0].kinds:
            continue  # "(using dividends paid and net income)": what it is computed from, not how
        found.append(_Definition(subject, inner, " ".join(s.text for s in sent[i - len(subject):close + 1])))
        used.update(range(i + 1 - 1, close + 1))
    return found, used


# --- parsing -----------------------------------------------------------------------------------------------


class _NotOneMetric(Exception):
    """Two different metrics on the sides of an operation over years: no reading of the phrase."""


class _ToTree(Transformer):
    """The parse as plan nodes; metrics stay named (``metric`` without arguments) until :func:`_resolve`."""

    def __init__(self, defined: dict[str, PlanNode]) -> None:
        super().__init__()
        self.defined = defined

    def METRIC(self, tok: Token) -> PlanNode:
        return PlanNode("metric", tok[3:-1].replace("_", " "))

    def NUMBER(self, tok: Token) -> PlanNode:
        return PlanNode("number", value=float(tok[3:-1]))

    def DEFINED_REF(self, tok: Token) -> PlanNode:
        return self.defined[tok[3:-1]]

    def add(self, a: list) -> PlanNode:
        nodes = [x for x in a if isinstance(x, PlanNode)]
        return PlanNode("add", args=(nodes[0], nodes[-1]))

    def sub(self, a: list) -> PlanNode:
        return PlanNode("sub", args=(a[0], a[2]))

    def difference(self, a: list) -> PlanNode:
        nodes = [x for x in a if isinstance(x, PlanNode)]
        if nodes[0] == nodes[-1]:  # "the difference in revenue and revenue": one metric is a change over years
            raise _NotOneMetric
        return PlanNode("sub", args=(nodes[0], nodes[-1]))

    def excess(self, a: list) -> PlanNode:
        return _by_how_much([x for x in a if isinstance(x, PlanNode)])

    def shortfall(self, a: list) -> PlanNode:
        return _by_how_much([x for x in a if isinstance(x, PlanNode)][::-1])

    def mul(self, a: list) -> PlanNode:
        return PlanNode("mul", args=(a[0], a[2]))

    def div(self, a: list) -> PlanNode:
        nodes = [x for x in a if isinstance(x, PlanNode)]
        return PlanNode("div", args=(nodes[0], nodes[1]))

    def div_reversed(self, a: list) -> PlanNode:
        nodes = [x for x in a if isinstance(x, PlanNode)]
        return PlanNode("div", args=(nodes[1], nodes[0]))

    def share(self, a: list) -> PlanNode:
        return PlanNode("percent", args=(PlanNode("div", args=(a[0], a[-1])),))

    def share_of(self, a: list) -> PlanNode:
        nodes = [x for x in a if isinstance(x, PlanNode)]
        return PlanNode("percent", args=(PlanNode("div", args=(nodes[1], nodes[0])),))

    def margin(self, a: list) -> PlanNode:
        return PlanNode("percent", args=(PlanNode("div", args=(a[0], PlanNode("metric", "revenue"))),))

    def per_share(self, a: list) -> PlanNode:
        return PlanNode("div", args=(a[0], PlanNode("metric", "diluted shares")))

    def one_minus(self, a: list) -> PlanNode:
        return PlanNode("sub", args=(PlanNode("number", value=1.0), a[-1]))

    def average(self, a: list) -> str:
        return "average"

    def change(self, a: list) -> str:
        return "change"

    def growth(self, a: list) -> str:
        return "growth"

    def cagr(self, a: list) -> str:
        return "cagr"

    def apply(self, a: list) -> PlanNode:
        return _over_years(a[0], a[-1])

    def apply_after(self, a: list) -> PlanNode:
        return _over_years(a[1], a[0])

    def apply_after_share(self, a: list) -> PlanNode:
        return PlanNode(a[-1], args=(self.share([x for x in a if isinstance(x, PlanNode)]),))

    def apply_between(self, a: list) -> PlanNode:
        nodes = [x for x in a if isinstance(x, PlanNode)]
        if nodes[0] != nodes[-1]:
            raise _NotOneMetric
        return PlanNode(next(x for x in a if isinstance(x, str) and not isinstance(x, Token)), args=(nodes[0],))

    def span_words(self, a: list) -> PlanNode:
        return a[-1]  # "2 year revenue CAGR": the years are the question's (engine.intent.periods)

    def pct_change(self, a: list) -> PlanNode:
        return PlanNode("growth", args=(next(x for x in a if isinstance(x, PlanNode)),))

    def at_years(self, a: list) -> PlanNode:
        years = next(x for x in a if isinstance(x, Token) and x.type == "YEARS")
        node = next(x for x in a if isinstance(x, PlanNode))
        return PlanNode("years", str(years)[3:-1], args=(node,))

    def atom(self, a: list) -> PlanNode:
        return next(x for x in a if isinstance(x, PlanNode))


_OVER_YEARS = ("change", "growth", "average", "cagr")


def _over_years(op: str, node: PlanNode) -> PlanNode:
    """An operation over years of ``node``; a growth of a growth is one growth written twice ("revenue YoY growth":
    "YoY" and "growth" each say it)."""
    return node if op == "growth" and node.kind == "growth" else PlanNode(op, args=(node,))


def _by_how_much(nodes: list[PlanNode]) -> PlanNode:
    """By how much the first of ``nodes`` exceeds the second: the first less the second; one metric (named once, or on
    both sides with only its years differing) is its change between the question's periods. A move set against a
    metric named bare ("SG&A grew faster than revenue") is set against that metric's same move."""
    bare = [n.args[0] if n.kind == "years" else n for n in nodes]
    if len(bare) == 1 or bare[0] == bare[-1]:
        return PlanNode("change", args=(bare[0],))
    first, second = nodes[0], nodes[-1]
    if first.kind in _OVER_YEARS and second.kind == "metric":
        second = PlanNode(first.kind, args=(second,))
    elif second.kind in _OVER_YEARS and first.kind == "metric":
        first = PlanNode(second.kind, args=(first,))
    return PlanNode("sub", args=(first, second))


def _named_parts(phrase: list[_Tok]) -> tuple[list[_Tok], list[str]]:
    """The asked metric without the parts named after it ("returned to shareholders through dividends and buybacks",
    "paid out to shareholders as dividends"), and those parts' metrics; a VIA word followed by anything but metrics is
    frame ("through 2023")."""
    at = next((i for i, t in enumerate(phrase) if "VIA" in t.kinds), None)
    if at is None:
        # "paid out to shareholders as dividends": "as" between a metric and metrics alone names its parts
        at = next((i for i, t in enumerate(phrase) if "AS" in t.kinds and i and "METRIC" in phrase[i - 1].kinds
                   and phrase[i + 1:] and all("METRIC" in x.kinds or x.kinds <= _AROUND for x in phrase[i + 1:])
                   and any("METRIC" in x.kinds for x in phrase[i + 1:])), None)
        return (phrase[:at], [t.value for t in phrase[at + 1:] if "METRIC" in t.kinds]) if at is not None \
            else (phrase, [])
    tail = phrase[at + 1:]
    names = [t.value for t in tail if "METRIC" in t.kinds]
    if names and all("METRIC" in t.kinds or t.kinds <= _AROUND for t in tail):
        return phrase[:at], names
    return [t for t in phrase if "VIA" not in t.kinds], []


def _through(tree: PlanNode, parts: list[str], catalogue: Catalogue, defined: dict[str, PlanNode]
             ) -> PlanNode | MetricPlan:
    """``tree`` with the metric the named ``parts`` make up replaced by their sum (by the metric itself when they
    are all of it); a part that is not of it leaves the question unread, saying so."""
    nodes = []
    for name in parts:
        if name not in catalogue.metrics:
            return MetricPlan("outside", note=f"{name}: not a metric the catalogue computes from the statements",
                              named=(name,))
        nodes.append(metric_node(name, catalogue, defined))
    items = set().union(*(item_names(n) for n in nodes))

    def swap(node: PlanNode) -> PlanNode | None:
        if node.kind == "metric" and node.name in catalogue.metrics and items <= item_names(node):
            if items == item_names(node):
                return node
            total = nodes[0]
            for n in nodes[1:]:
                total = PlanNode("add", args=(total, n))
            return total
        for i, a in enumerate(node.args):
            if (new := swap(a)) is not None:
                return replace(node, args=(*node.args[:i], new, *node.args[i + 1:]))
        return None

    out = swap(tree)
    if out is None:
        named = " and ".join(parts)
        return MetricPlan("unread", unread=tuple(parts), note=f"the question names {named} as part of "
                          f"{plan_words(tree, catalogue)}, which it is not")
    return out


def _parse(toks: list[_Tok], defined: dict[str, PlanNode]) -> PlanNode | None:
    text = " ".join(t.render() for t in toks)
    if not text:
        return None
    parser = _parser()  # (a grammar that does not load is a bug, not a question it cannot read)
    try:
        tree = parser.parse(text)
    except LarkError:
        return None
    try:
        out = _ToTree(defined).transform(tree)
    except VisitError as exc:
        if isinstance(exc.orig_exc, _NotOneMetric):
            return None
        raise
    return _unwrap(out)


def _unwrap(node: object) -> PlanNode | None:
    """Lark's bracketing rules ("( expr )") leave a token list around a node."""
    while not isinstance(node, PlanNode):
        if hasattr(node, "children"):
            kids = [c for c in node.children if isinstance(c, PlanNode) or hasattr(c, "children")]
            if len(kids) != 1:
                return None
            node = kids[0]
        else:
            return None
    return node


# --- the catalogue's formulas as trees ---------------------------------------------------------------------


def tree_of_formula(formula: str, catalogue: Catalogue, defined: dict[str, PlanNode] | None = None,
                    seen: tuple[str, ...] = ()) -> PlanNode:
    """A catalogue formula as a plan tree: ``avg(x)`` the mean of x at two year-ends, ``prior(x)`` x a year before,
    ``{metric}`` that metric (or the question's definition of it, ``defined``)."""
    refs: dict[str, str] = {}

    def ref(m: re.Match[str]) -> str:
        key = f"ref{len(refs)}"
        refs[key] = m[1].strip()
        return key

    from engine.vocab.catalogue import REFERENCE  # the catalogue's own syntax (it moves down with issue 42)

    body = REFERENCE.sub(ref, formula)

    def node(n: ast.AST) -> PlanNode:
        if isinstance(n, ast.Expression):
            return node(n.body)
        if isinstance(n, ast.Constant) and isinstance(n.value, (int, float)):
            return PlanNode("number", value=float(n.value))
        if isinstance(n, ast.Name):
            if n.id in refs:
                return metric_node(refs[n.id], catalogue, defined or {}, seen)
            return PlanNode("item", n.id)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and len(n.args) == 1:
            inner = node(n.args[0])
            if n.func.id == "avg":
                return PlanNode("average", args=(inner,), backs=(0, 1))
            if n.func.id == "prior":
                return PlanNode("at", args=(inner,), backs=(1,))
        if isinstance(n, ast.BinOp):
            ops = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div"}
            if type(n.op) in ops:
                kind = ops[type(n.op)]
                left, right = node(n.left), node(n.right)
                if kind == "mul" and right.kind == "number" and right.value == 100:
                    return PlanNode("percent", args=(left,))
                return PlanNode(kind, args=(left, right))
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            return PlanNode("sub", args=(PlanNode("number", value=0.0), node(n.operand)))
        raise ValueError(f"catalogue formula {formula!r}: {ast.dump(n)} is not arithmetic over line items")

    return node(ast.parse(body, mode="eval"))


def metric_node(name: str, catalogue: Catalogue, defined: dict[str, PlanNode], seen: tuple[str, ...] = ()) -> PlanNode:
    """A catalogue metric as a node: the question's definition of it, else its formulas (its own metric
    references resolved the same way)."""
    if name in defined:
        return PlanNode("metric", name, (defined[name],))
    if name in seen:
        raise ValueError(f"metric {name!r} is defined through itself")
    m = catalogue.metrics[name]
    return PlanNode("metric", name, tuple(tree_of_formula(f, catalogue, defined, (*seen, name))
                                          for f in (m.source or m.formulas)))


# --- dimensions --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Dimension:
    """A value's unit as powers: USD^usd · days^days · (1/100)^-percent · shares^shares."""

    usd: int = 0
    days: int = 0
    percent: int = 0
    shares: int = 0

    @property
    def unit(self) -> str | None:
        return {Dimension(1): "USD", Dimension(): "ratio", Dimension(percent=1): "percent",
                Dimension(days=1): "days", Dimension(1, shares=-1): "USD/share",
                Dimension(shares=1): "shares"}.get(self)


class DimensionError(ValueError):
    """The expression adds or compares values of different units."""


_DAYS_IN_YEAR = frozenset({360.0, 365.0, 366.0})
_AMOUNTS = ("USD", "USD/share", "shares")  # units a percentage is the growth of, never a value of
_ITEM_DIMENSIONS = {"USD": Dimension(1), "USD/share": Dimension(1, shares=-1), "shares": Dimension(shares=1)}


def dimension_of(node: PlanNode, catalogue: Catalogue) -> Dimension:
    """The unit of ``node`` by dimensional analysis. Raises :class:`DimensionError` where it has none."""
    k = node.kind
    if k == "item":
        item = catalogue.items.get(node.name)
        return _ITEM_DIMENSIONS[item.unit if item is not None else "USD"]
    if k == "number":
        return Dimension(days=1) if node.value in _DAYS_IN_YEAR else Dimension()
    if k == "metric":
        dims = {dimension_of(a, catalogue) for a in node.args}
        if len(dims) != 1:
            raise DimensionError(f"the formulas of {node.name} have different units")
        return dims.pop()
    args = [dimension_of(a, catalogue) for a in node.args]
    if k in ("add", "sub"):
        a, b = args
        if a != b and not (node.args[0].kind == "number" and a == Dimension() or
                           node.args[1].kind == "number" and b == Dimension()):
            raise DimensionError(f"{_unit_words(a)} and {_unit_words(b)} cannot be added or subtracted")
        return a if node.args[0].kind != "number" else b
    if k == "mul":
        a, b = args
        return Dimension(a.usd + b.usd, a.days + b.days, a.percent + b.percent, a.shares + b.shares)
    if k == "div":
        a, b = args
        return Dimension(a.usd - b.usd, a.days - b.days, a.percent - b.percent, a.shares - b.shares)
    if k == "percent":
        (a,) = args
        return Dimension(a.usd, a.days, a.percent + 1, a.shares)
    if k in ("growth", "cagr"):
        return Dimension(percent=1)
    return args[0]  # at, average, change, years


def _unit_words(d: Dimension) -> str:
    return {"USD": "an amount", "ratio": "a ratio", "percent": "a percentage", "days": "days",
            "USD/share": "an amount per share", "shares": "a number of shares"}.get(
        d.unit or "", "a value of another unit")


# --- the plan in words -------------------------------------------------------------------------------------


def plan_words(node: PlanNode, catalogue: Catalogue) -> str:
    """The tree as an analyst reads it: "cost of sales / average(inventories at two year-ends)"."""
    k = node.kind
    if k == "item":
        return catalogue.items[node.name].words if node.name in catalogue.items else node.name
    if k == "number":
        return f"{node.value:g}"
    if k == "metric":
        if len(node.args) == 1 and (node.name not in catalogue.metrics or node.args[0] != metric_node(
                node.name, catalogue, {}).args[0]):
            return f"{node.name} [as defined: {plan_words(node.args[0], catalogue)}]"
        return node.name
    a = [plan_words(x, catalogue) for x in node.args]
    op = {"add": "+", "sub": "-", "mul": "×", "div": "/"}.get(k)
    if op:
        return f"({a[0]} {op} {a[1]})"
    if k == "percent":
        return f"{a[0]} × 100"
    if k == "at":
        return f"{a[0]} {node.backs[0]} year(s) before"
    if k == "average":
        return f"average of {a[0]} over {len(node.backs)} year(s)" if len(node.backs) != 2 or node.backs != (0, 1) \
            else f"average of {a[0]} at two year-ends"
    years = node.backs[-1] - node.backs[0] if node.backs else 1  # (a definition's, before its years are placed)
    if k == "change":
        return f"change in {a[0]} over {years} year(s)"
    if k == "growth":
        return f"growth of {a[0]} over {years} year(s), %"
    if k == "cagr":
        return f"CAGR of {a[0]} over {years} year(s)"
    return a[0] if a else k


def _metric_words(node: PlanNode, catalogue: Catalogue) -> str:
    """A metric node spelt out: its name and the formula used (the first, or the question's definition)."""
    if node.kind != "metric" or not node.args:
        return plan_words(node, catalogue)
    return f"{node.name} = {plan_words(node.args[0], catalogue)}"


# --- the reading -------------------------------------------------------------------------------------------


@dataclass
class _Reading:
    read: list[str] = field(default_factory=list)
    unread: list[str] = field(default_factory=list)
    scope: list[str] = field(default_factory=list)
    definitions: list[str] = field(default_factory=list)


def _asked(sentences: list[list[_Tok]]) -> list[int]:
    """The sentences that ask: those ending in "?", else those that are not instructions."""
    asks = [i for i, s in enumerate(sentences) if s and s[-1].text == "?"]
    if asks:
        return asks
    return [i for i, s in enumerate(sentences)
            if not (s[0].text.lower() in ("please", "round", "answer", "give", "provide", "base", "respond", "assume",
                                          "note", "use", "using") or "DEFINE" in s[0].kinds)] or [0]


def _source_clauses(sent: list[_Tok]) -> set[int]:
    """The positions of the clauses of a sentence that only say where to look: a clause between commas (outside
    parentheses) that names a statement and no metric, number or year ("Basing your judgments off of the cash flow
    statement and the income statement, what is …"; "When primarily referencing the balance sheet, …"). Their words
    are instructions, not part of the metric asked."""
    clauses: list[list[int]] = [[]]
    depth = 0
    for i, t in enumerate(sent):
        depth += ("LPAR" in t.kinds) - ("RPAR" in t.kinds)
        if "COMMA" in t.kinds and depth <= 0:
            clauses.append([])
        else:
            clauses[-1].append(i)
    if len(clauses) < 2:
        return set()
    return {i for clause in clauses
            if any("STATEMENT" in sent[i].kinds for i in clause)
            and not any(sent[i].kinds & {"METRIC", "NUMBER", "YEAR", "DEFINED_REF"} for i in clause)
            for i in clause}


def _phrase(sent: list[_Tok], used: set[int], definition: bool = False) -> list[_Tok]:
    """The asked metric of a sentence: without its definitions, the clauses that say where to look
    (:func:`_source_clauses`), its frame, and the function words around it."""
    kept: list[_Tok] = []
    used = used | _source_clauses(sent)
    than = any("THAN" in t.kinds for t in sent)  # "more … than": a comparison, read by the judgement
    for i, t in enumerate(sent):
        if i in used or "BOUNDARY" in t.kinds or t.pure_frame:
            continue
        after = [x for k, x in enumerate(sent[i + 1:], start=i + 1) if k not in used and not x.kinds & {"BOUNDARY"}]
        if not definition and "USING" in t.kinds and t.text.lower() not in ("with", "from") \
                and any(x.kinds & {"METRIC", "WORD", "NAME"} for x in kept) \
                and any("METRIC" in x.kinds for x in after) \
                and all(x.kinds & {"METRIC", "AND", "COMMA", "OF"} or x.pure_frame for x in after):
            # "… based on dividends paid", "… using net income and total assets" closing the phrase: what it is
            # computed from, read as a parenthesis saying so is (the names must be inputs of the plan; "compared with
            # its marketing expenses", "from the cash flow statement" say no such thing)
            kept.append(_Tok(t.start, after[-1].end, "", frozenset({"HINT"}),
                             ",".join(x.value for x in after if "METRIC" in x.kinds)))
            break
        if than and t.kinds & {"MOST", "LEAST"} and t.kinds <= _COMPARATIVE or _more_of(t, sent[i + 1:]):
            kept.append(t)  # (read by the judgement: "more … than", "did it take on more debt")
            continue
        if t.kinds <= _FRAME | _SOFT | {"EQ", "WHICH", "DEFINE", "USING", "LEAST", "MOST", "COMMA", "DEFINED", "RATE"} \
                and not t.kinds & set(_STRUCTURAL):
            continue  # a frame word that the grammar composes nothing with ("is", "what", "using")
        kept.append(t)
    # years: a run "2018 and 2019" inside the phrase qualifies what it stands next to; around it, the frame's
    merged: list[_Tok] = []
    for t in kept:
        if "YEAR" in t.kinds and merged and "YEARS" in merged[-1].kinds:
            merged[-1] = _Tok(merged[-1].start, t.end, "", frozenset({"YEARS"}), f"{merged[-1].value},{t.value}")
        elif "YEAR" in t.kinds:
            merged.append(_Tok(t.start, t.end, t.text, frozenset({"YEARS"}), t.value))
        elif merged and "YEARS" in merged[-1].kinds and t.text.lower() in ("and", "-", "–", "to", "through", "&"):
            merged.append(t)  # (joined below)
        else:
            merged.append(t)
    out: list[_Tok] = []
    for t in merged:
        if "YEARS" in t.kinds and len(out) >= 2 and "YEARS" in out[-2].kinds and \
                out[-1].text.lower() in ("and", "-", "–", "to", "through", "&"):
            out.pop()
            prev = out.pop()
            t = _Tok(prev.start, t.end, "", frozenset({"YEARS"}), f"{prev.value},{t.value}")
        out.append(t)
    return _trimmed(_balanced(_parentheticals(out)), definition)


_AROUND = _SOFT | _FRAME | {"COMMA", "WHICH", "DEFINE", "USING", "EQ"}


def _trimmed(cleaned: list[_Tok], definition: bool = False) -> list[_Tok]:
    """A phrase without the function words around it and the parentheses the frame left empty."""
    while True:  # function words around the metric, and parentheses the frame left empty "(in USD millions)"
        # (the asked metric's years are the question's; a definition's years qualify its operands)
        while cleaned and (cleaned[0].kinds <= _AROUND or "YEARS" in cleaned[0].kinds and not definition):
            cleaned = cleaned[1:]
        while cleaned and (cleaned[-1].kinds <= _AROUND or "YEARS" in cleaned[-1].kinds and not definition):
            cleaned = cleaned[:-1]
        empty = next((i for i in range(len(cleaned) - 1) if "LPAR" in cleaned[i].kinds and "RPAR" in
                      cleaned[i + 1].kinds), None)
        if empty is None:
            break
        cleaned = cleaned[:empty] + cleaned[empty + 2:]
    return cleaned


def _balanced(toks: list[_Tok]) -> list[_Tok]:
    """Without a parenthesis whose partner the frame took ("… (in percent and round to one decimal)")."""
    depth, keep = 0, [True] * len(toks)
    opened: list[int] = []
    for i, t in enumerate(toks):
        if "LPAR" in t.kinds:
            opened.append(i)
        elif "RPAR" in t.kinds:
            if opened:
                opened.pop()
            else:
                keep[i] = False
    for i in opened:
        keep[i] = False
    del depth
    return [t for t, k in zip(toks, keep) if k]


def _parentheticals(toks: list[_Tok]) -> list[_Tok]:
    """A parenthesis that names what stands before it again ("days payable outstanding (DPO)"), or says what it is
    computed from ("(using dividends paid and net income)", "(from the cash flow statement)"), is read apart: the
    names it lists must be inputs of the plan (:func:`read_plan` checks), and it computes nothing itself."""
    out: list[_Tok] = []
    i = 0
    while i < len(toks):
        t = toks[i]
        close = next((k for k in range(i + 1, len(toks)) if "RPAR" in toks[k].kinds), None) \
            if "LPAR" in t.kinds else None
        if close is not None:
            inner = [x for x in toks[i + 1:close] if not x.pure_frame]
            arithmetic = any(x.kinds & {"DIV", "TIMES", "PLUS", "MINUS", "PCT", "AVG", "CHANGE"} and
                             "USING" not in x.kinds for x in inner[1:] or inner[:0])
            alias = len(inner) == 1 and inner[0].kinds & {"METRIC", "WORD", "NAME"} and out and \
                (out[-1].kinds & {"METRIC", "WORD", "NAME"})
            hint = not inner or "USING" in inner[0].kinds or all(
                x.kinds & {"METRIC", "AND", "COMMA", "USING", "OF"} for x in inner)
            if (alias or hint) and not arithmetic:
                out.append(_Tok(t.start, toks[close].end, "", frozenset({"HINT"}),
                                ",".join(x.value for x in inner if "METRIC" in x.kinds)))
                i = close + 1
                continue
        out.append(t)
        i += 1
    return out


def _name_key(toks: Sequence[_Tok]) -> tuple[str, ...]:
    return tuple(t.value if "METRIC" in t.kinds else t.text.lower() for t in toks
                 if not t.kinds & {"QUALIFIER", "FILLER"} or t.kinds & {"METRIC", "WORD", "SCOPE"})


def _substitute(toks: list[_Tok], names: dict[tuple[str, ...], str]) -> list[_Tok]:
    """Each run of words that a definition names, as a reference to it (longest name first)."""
    out: list[_Tok] = []
    i = 0
    ordered = sorted(names.items(), key=lambda kv: -len(kv[0]))
    while i < len(toks):
        for key, ref in ordered:
            n = len(key)
            if n and _name_key(toks[i:i + n]) == key and len(toks[i:i + n]) == n:
                out.append(_Tok(toks[i].start, toks[i + n - 1].end, " ".join(t.text for t in toks[i:i + n]),
                                frozenset({"DEFINED_REF"}), ref))
                i += n
                break
        else:
            out.append(toks[i])
            i += 1
    return out


def _resolve(node: PlanNode, catalogue: Catalogue, defined: dict[str, PlanNode], outside: list[str]) -> PlanNode:
    """Metric names replaced by their formulas (or the question's definitions of them)."""
    if node.kind == "metric" and not node.args:
        if node.name in defined:
            return PlanNode("metric", node.name, (defined[node.name],))
        if node.name not in catalogue.metrics:
            outside.append(node.name)
            return node
        return metric_node(node.name, catalogue, defined)
    if not node.args:
        return node
    return replace(node, args=tuple(_resolve(a, catalogue, defined, outside) for a in node.args))


def _place_years(node: PlanNode, latest: int, asked: tuple[int, ...], root: bool = True) -> PlanNode:
    """Operations over years get their years: those written beside them, else (at the root of the asked metric) the
    years the question asks, else a balance's two year-ends (the year and the one before)."""
    k = node.kind
    if k == "years":
        years = sorted({int(y) for y in node.name.split(",")})
        inner = node.args[0]
        if inner.kind in ("average", "change", "growth", "cagr") and not inner.backs:
            if len(years) == 1:  # "revenue growth in FY2023": over the year before
                years = [years[0] - 1, years[0]]
            return _with_backs(inner, years, latest, asked)
        if len(years) == 1:
            back = latest - years[0]
            placed = _place_years(inner, latest, asked, root=False)
            return PlanNode("at", args=(placed,), backs=(back,)) if back else placed
        return _with_backs(PlanNode("average", args=(inner,)), years, latest, asked)  # "2018 and 2019 inventories"
    if k in ("average", "change", "growth", "cagr") and not node.backs:
        if node.args[0].kind == "years":  # "the average of 2018 and 2019 inventories", "change in X between …"
            written = sorted({int(y) for y in node.args[0].name.split(",")})
            if len(written) > 1:
                return _with_backs(replace(node, args=node.args[0].args), written, latest, asked)
        years = sorted(asked) if root and len(asked) > 1 else [latest - 1, latest]
        return _with_backs(node, years, latest, asked)
    if not node.args:
        return node
    return replace(node, args=tuple(_place_years(a, latest, asked, root=False) for a in node.args))


def _with_backs(node: PlanNode, years: list[int], latest: int, asked: tuple[int, ...]) -> PlanNode:
    backs = tuple(sorted({latest - y for y in years}))
    inner = _place_years(node.args[0], latest, asked, root=False)
    if node.kind == "average":
        return PlanNode("average", args=(inner,), backs=backs)
    return PlanNode(node.kind, args=(inner,), backs=(backs[0], backs[-1]))


def item_names(node: PlanNode) -> set[str]:
    """The line items a tree reads (of its metrics, every formula's)."""
    return ({node.name} if node.kind == "item" else set()).union(*(item_names(a) for a in node.args))


def _closest(words: str, catalogue: Catalogue) -> tuple[str, ...]:
    return tuple(difflib.get_close_matches(words.lower(), list(catalogue.metrics), n=3, cutoff=0.6))


def _is_choice(sent: list[_Tok], catalogue: Catalogue) -> tuple[list[str], str] | None:
    """"Which of A, B and C is the largest": two or more catalogue amounts listed one after another, a "which" that
    does not choose among years, segments or companies, and a superlative."""
    kinds = [t.kinds for t in sent]
    if not any("WHICH" in k for k in kinds) or not any(k & {"MOST", "LEAST"} for k in kinds):
        return None
    w = next(i for i, k in enumerate(kinds) if "WHICH" in k)
    if w + 1 < len(sent) and ("SCOPE" in kinds[w + 1] or re.search(
            r"\b(?:years?|quarters?|periods?|months?|compan(?:y|ies)|products?|countr(?:y|ies)|brands?|markets?)\b",
            sent[w + 1].text, re.IGNORECASE)):
        return None  # chooses among years, companies or parts of the company, not among listed amounts
    listed: list[str] = []
    run: list[str] = []
    for t in sent:
        if "METRIC" in t.kinds and t.value in catalogue.metrics and catalogue.metrics[t.value].unit == "USD":
            run.append(t.value)
        elif run and t.kinds & {"COMMA", "AND", "OR", "TO"} or t.text.lower() == "the":
            continue
        elif run:
            if len(run) > len(listed):
                listed = run
            run = []
    if len(run) > len(listed):
        listed = run
    listed = list(dict.fromkeys(listed))
    if len(listed) < 2:
        return None
    at = next(i for i, t in enumerate(sent) if t.kinds & {"MOST", "LEAST"})
    first = sent[at]
    most = "MOST" in first.kinds and not ("LEAST" in first.kinds and first.text.lower() == "less")
    # "which lost the most cash": the one furthest below zero ("brought in the most (or lost the least)": the largest)
    losing = any("LOSS" in t.kinds for t in sent[max(0, at - 3):at])
    return listed, "largest" if most != losing else "smallest"


_LEVELS = (">=", "<=", ">", "<")
_VERBAL = frozenset({"LOSS", "MOST", "LEAST"})  # the words a verb of profit or loss leaves in the asked phrase


@dataclass
class _Judged:
    test: str  # up | down | either | rising | falling (every year) | band | good | >= | <= | > | < | every>= …
    bar: float | None
    words: list[str]  # the question's words of the judgement
    rest: list[_Tok]  # the phrase without them: the metric judged
    quality: str = ""  # a quality of judgements.toml the question names ("capital intensive")
    amount: bool = False  # the bar is an amount written with its scale ("$400 billion"), in dollars
    multiple: float = 0.0  # "double": the later value as a multiple of the earlier (judged by the growth)
    moved: bool = False  # "grow by more than 10%": the bar is the move's (an amount's growth, a rate's points)


@dataclass(frozen=True)
class _Quality:
    forms: re.Pattern[str]
    formula: str  # over catalogue metrics: "{capital expenditures} / {revenue} * 100"
    over: str  # "" (the formula's value) | "growth" (its growth over the year before, in %)
    words: str  # the metric as the answer states it
    test: str
    bar: float


@lru_cache(maxsize=1)
def _judgements() -> dict:
    return tomllib.loads((_READER / "judgements.toml").read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def _every() -> re.Pattern[str]:
    """The words that ask a direction of every year (``resources/reader/judgements.toml`` [every])."""
    forms = sorted(_judgements()["every"]["forms"], key=len, reverse=True)
    return re.compile("|".join(_bounded(f.replace(" ", r"[\s-]+")) for f in forms), re.IGNORECASE)


@lru_cache(maxsize=1)
def _multiples() -> list[tuple[str, re.Pattern[str]]]:
    """The words of a multiple of the earlier value ("double", "halved"), by factor (judgements.toml [multiple])."""
    return [(factor, re.compile("|".join(_bounded(f.replace(" ", r"[\s-]+")) for f in sorted(forms, key=len,
                                                                                           reverse=True)),
                                re.IGNORECASE))
            for factor, forms in _judgements()["multiple"].items()]


@lru_cache(maxsize=1)
def _qualities() -> dict[str, _Quality]:
    """The qualities a yes/no question may ask of a company (``resources/reader/judgements.toml``)."""
    out = {}
    for name, q in _judgements().get("quality", {}).items():
        forms = sorted(q["forms"], key=len, reverse=True)
        rx = re.compile("|".join(_bounded(f.replace(" ", r"[\s-]+")) for f in forms), re.IGNORECASE)
        out[name] = _Quality(rx, q["formula"], q.get("over", ""), q["words"], q["test"], float(q["bar"]))
    return out


def _judgement(phrase: list[_Tok], *, between: bool = False) -> _Judged | None:
    """The judgement a yes/no question asks of its metric, or None: a direction ("improving", "declined"; "increase
    or decrease": which), a level ("healthy"), a bar it writes ("above 1.5"), stability ("consistent, not
    fluctuating more than 2%": the band), or a quality that names its own metric ("capital-intensive"); the aspect
    words around it ("liquidity profile") are the judgement's, the metric named decides it. Where the question
    names two periods (``between``), a comparison with no number after it ("exceed its FY2021 level", "more than in
    2021") is the direction from the earlier to the later, and the "than" of a direction is its other side."""
    test, bar, words, quality, amount = "", None, [], "", False
    rest: list[_Tok] = []
    at = -1  # where the direction's word stood in the rest
    written: float | None = None  # a bar the question writes
    # a stability word beside a direction ("grown steadily", "consistently declining") says how the direction is
    # judged (every year: read_plan), not that the metric is stable
    directed = any(t.kinds & {"UP", "DOWN"} for t in phrase)
    stable = any("STABLE" in t.kinds for t in phrase) and not directed
    earlier = any("EARLIER" in t.kinds for t in phrase)  # "… than the prior year": against the year before
    multiple = 0.0
    moved = ""  # the direction whose size a bar written after it judges ("grow by more than 10%")
    times = next((k for k, t in enumerate(phrase) if "MULTIPLE" in t.kinds), -1)
    i = 0
    while i < len(phrase):
        t = phrase[i]
        if i == times - 1 and t.kinds & {"ABOVE", "BELOW", "EXCEED", "SHORT", "MOST", "LEAST"} and not test:
            words.append(t.text)  # "more than double", "less than double": the side of the multiple (below)
            i += 1
            continue
        if "MULTIPLE" in t.kinds and not test and not stable:
            # "did it double": its growth from the earlier period at or above 100% ("less than": below; "halved":
            # at or below −50%)
            multiple = float(t.value)
            under = i and phrase[i - 1].kinds & {"BELOW", "SHORT", "LEAST"} and phrase[i - 1].text in words[-1:]
            test = "<" if under else ">=" if multiple > 1 else "<="
            bar = (multiple - 1) * 100
            words.append(t.text)
            i += 1
            continue
        if t.kinds & {"ABOVE", "BELOW"} and written is None and i + 1 < len(phrase) \
                and phrase[i + 1].kinds & {"NUMBER", "ONE"}:  # ("above 1": the grammar's ONE is a number here)
            written = float(phrase[i + 1].value) if "NUMBER" in phrase[i + 1].kinds else 1.0
            amount = "AMOUNT" in phrase[i + 1].kinds
            if (not test or test == "good") and not stable:  # ("comfortable, above 5x": the bar written decides)
                test = ">=" if "ABOVE" in t.kinds else "<="
            elif test in ("up", "down") and i + 2 < len(phrase) and phrase[i + 2].kinds & {"PCT"}:
                # "did it grow by more than 10%", "fall by at least 5%": the move's size against the bar
                moved, test = test, (">=" if "ABOVE" in t.kinds else "<=") if test == "up" else (
                    "<=" if "ABOVE" in t.kinds else ">=")
            words += [t.text, phrase[i + 1].text]
            i += 2
            # "above 20%": a bar in percent; "below 2x": a multiple
            if i < len(phrase) and ("PCT" in phrase[i].kinds or phrase[i].text.lower() in ("x", "×", "times")):
                words.append(phrase[i].text)
                i += 1
            continue
        if "NUMBER" in t.kinds and stable and written is None:  # "stable, within 0.5%": the band
            written = float(t.value)
            words.append(t.text)
            if i + 1 < len(phrase) and "PCT" in phrase[i + 1].kinds:
                words.append(phrase[i + 1].text)
                i += 1
        elif "STABLE" in t.kinds:
            if not directed:
                test = "band"
            words.append(t.text)
        elif "QUALITY" in t.kinds and not quality:
            quality = t.value
            q = _qualities()[quality]
            if not test:
                test, bar = q.test, q.bar
            words.append(t.text)
        elif t.kinds & {"POSITIVE", "NEGATIVE"} and not test:  # "positive working capital": its sign
            test, bar = (">" if "POSITIVE" in t.kinds else "<"), 0.0
            words.append(t.text)
        elif "EITHER" in t.kinds and not test:
            test = "either"
            words.append(t.text)
        elif t.kinds & {"UP", "DOWN"} and test in ("up", "down") and ("UP" in t.kinds) != (test == "up") \
                and i and phrase[i - 1].kinds & {"OR", "UP", "DOWN"}:  # ("or" is frame: it may be gone)
            test = "either"  # "did it increase or decrease": which way, not yes or no
            words.append(t.text)
        elif t.kinds & {"UP", "DOWN"} and t.kinds & {"CHANGE", "GROWTH"} and not test and not stable \
                and _against_another(phrase[i + 1:]):
            # "did SG&A grow faster than revenue", "did costs rise more than sales": the move set against the other
            # metric's same move (the grammar's), not a direction of one: by how much the first's exceeds, against zero
            test, bar = ">", 0.0
            words += [x.text for x in phrase[i + 1:i + 3] if x.kinds & {"MOST", "LEAST", "EXCEED", "SHORT", "THAN"}]
            rest.append(t)
        elif t.kinds & {"UP", "DOWN", "GOOD"} and not test and not (
                t.kinds & {"EXCEED", "SHORT"} and _another_after(phrase, i)):
            # (a word of both, "outpace", "surpass", with another metric after it: by how much the one exceeds the
            # other; the same metric after it, "did its Q2 revenue surpass its Q2 2022 revenue", is a direction)
            test = "up" if "UP" in t.kinds else "down" if "DOWN" in t.kinds else "good"
            words.append(t.text)
            at = len(rest)
        elif ((between or earlier) and t.kinds & {"ABOVE", "BELOW"} and "DIV" not in t.kinds and not test
              and not stable):  # "did its FY2022 margin exceed FY2021's", "higher than a year earlier": a direction
            # between the two ("over" is a division or the frame's)
            test = "up" if "ABOVE" in t.kinds else "down"
            words.append(t.text)
            at = len(rest)
        elif not test and not stable and (
                (between or earlier) and t.kinds & {"MOST", "LEAST"} and t.kinds <= _COMPARATIVE | _FRAME
                or _more_of(t, phrase[i + 1:]) and not any(x.kinds & {"THAN", "EXCEED", "SHORT"} for x in phrase)):
            # "did it spend more on capex in FY2022 than in FY2021"; with no other side written, "did it take on more
            # debt in 2022", "did it book less revenue": more or less of the metric than the year before
            test = "up" if "MOST" in t.kinds else "down"
            words.append(t.text)
            at = len(rest)
        elif (t.kinds & {"EXCEED", "SHORT"} and not test and not stable
              and any("METRIC" in x.kinds for x in phrase[i + 1:])
              or t.kinds & {"MOST", "LEAST"} and t.kinds <= _COMPARATIVE | _FRAME and not test and not stable
              and _than_another(phrase[i + 1:])):
            # ("did it spend more on capex than it generated from operations": "more … than" and a metric after it)
            # "did operating cash flow exceed net income", "was net income lower than operating income": the amount
            # by which it does (the grammar's), against zero
            test, bar = ">", 0.0
            words.append(t.text)
            rest.append(t)
        elif t.kinds & {"THAN", "EARLIER"} and test in ("up", "down"):  # "higher in FY2022 than in FY2021", "lower
            words.append(t.text)  # than the prior year"
        elif ("ASPECT" in t.kinds and "METRIC" not in t.kinds
              or "OR" in t.kinds and i + 1 < len(phrase) and phrase[i + 1].kinds & {"UP", "DOWN"}):
            words.append(t.text)
        else:
            rest.append(t)
        i += 1
    if written is not None:
        bar = -written if moved == "down" else written
    # parentheses the judgement's words leave empty ("gross margins (not fluctuating more than 2%)")
    if test in ("up", "down") and 0 < at < len(rest):
        # the metric named on both sides: "did its FY2023 revenue exceed its FY2022 revenue" judges one metric
        def bare(side: list[_Tok]) -> list[str]:
            return [x.render() for x in _trimmed([x for x in side if "YEARS" not in x.kinds])]
        if bare(rest[:at]) and bare(rest[:at]) == bare(rest[at:]):
            rest = rest[:at]
    # and the function words its words leave at either end ("… of sales in, and did that beat")
    return _Judged(test, bar, words, _trimmed(rest), quality, amount and written is not None, multiple,
                   bool(moved)) if test else None


@lru_cache(maxsize=1)
def _bars() -> dict[str, tuple[str, float]]:
    """What "healthy" means for a metric: ``resources/reader/judgements.toml``."""
    return {name: (test, float(bar)) for name, (test, bar) in _judgements()["good"].items()}


def quality_tree(judged: _Judged, catalogue: Catalogue) -> PlanNode:
    """The metric of a quality the question names: its formula, or its growth over the year before."""
    q = _qualities()[judged.quality]
    tree = tree_of_formula(q.formula, catalogue)
    return PlanNode("growth", args=(tree,)) if q.over == "growth" else tree


def _judge(tree: PlanNode, judged: _Judged, intent: QueryIntent, catalogue: Catalogue, words: str, *,
           read: tuple[str, ...], definitions: tuple[str, ...]) -> MetricPlan:
    """The plan of a judgement: a direction is the metric's change from the year before (or between the years
    asked), tested for its sign; stability is every yearly move over the years asked (or the latest three) within
    a band; a level is the metric's value against the bar the question writes or, for "healthy", the one
    ``judgements.toml`` states for that metric (none stated: not judged, the words unread), or for a quality, the
    quality's."""
    said, what = " ".join(judged.words), plan_words(tree, catalogue)
    if judged.test in ("up", "down", "either"):
        plan = finish_plan(PlanNode("change", args=(tree,)), intent, catalogue, words, read=read,
                           definitions=definitions)
        since = 'the year before' if len(asked_years(intent)) < 2 else 'in the earlier year asked'
        criterion = (f"'{' or '.join(judged.words)}' read as the direction of {what} against {since}"
                     if judged.test == "either" else
                     f"'{said}' read as {what} {'higher' if judged.test == 'up' else 'lower'} than {since}")
        return replace(plan, judge=judged.test, criterion=criterion) if plan.status == "complete" else plan
    if judged.quality:  # a quality asked of a metric the question names: "is its revenue fast-growing"
        if _qualities()[judged.quality].over != "growth":
            if tree != quality_tree(judged, catalogue):
                return MetricPlan("unread", unread=(words,), note=f"'{judged.quality}' is measured by "
                                  f"{_qualities()[judged.quality].words}, not by {what}")
        elif tree.kind != "growth":
            tree = PlanNode("growth", args=(tree,))
            what = plan_words(tree, catalogue)
    if judged.multiple and tree.kind != "growth":  # "did net income double": its growth against the multiple's
        tree = PlanNode("growth", args=(tree,))
        what = plan_words(tree, catalogue)
    if judged.moved and tree.kind not in ("growth", "change"):  # "grow by more than 10%": an amount's growth, a
        # rate's move in points
        tree = PlanNode("change" if dimension_of(tree, catalogue).unit == "percent" else "growth", args=(tree,))
        what = plan_words(tree, catalogue)
    if judged.test in ("band", "rising", "falling") or judged.test.startswith("every"):
        return _stability(tree, judged, intent, catalogue, words, read=read, definitions=definitions)
    test, bar = judged.test, judged.bar
    if test == "good":
        name = tree.name if tree.kind == "metric" else ""
        if name not in _bars():
            return MetricPlan("unread", unread=(said,), note=f"'{said}' states no bar for {name or words}: "
                              "resources/reader/judgements.toml names the metrics it judges")
        test, bar = _bars()[name]
    assert bar is not None
    plan = finish_plan(tree, intent, catalogue, words, read=read, definitions=definitions)
    relation = _RELATION[test]
    if (scaled := _scaled_bar(bar, judged, intent, plan.unit)) is None:
        return MetricPlan("unread", unread=(said,), note=f"'{said}' writes an amount; {what} is no amount")
    bar, shown = scaled
    if judged.quality:
        what = _qualities()[judged.quality].words
    elif judged.multiple:
        what = plan.words  # (the growth over the years asked)
    stated = judged.test == "good" or (judged.quality and bar == _qualities()[judged.quality].bar)
    if plan.unit == "percent":  # (one rate less another is in points: "SG&A growth less revenue growth above 0")
        points = tree.kind in ("sub", "change") and all(dimension_of(a, catalogue).unit == "percent"
                                                         for a in tree.args)
        shown = " percentage points" if points else "%"
    criterion = (f"'{said}' read as {what} {relation} {bar:,g}{shown}"
                 + (" (the bar resources/reader/judgements.toml states)" if stated else "")
                 + (f" (the later value {judged.multiple:g} times the earlier)" if judged.multiple else ""))
    return replace(plan, judge=test, bar=bar, criterion=criterion) if plan.status == "complete" else plan


_RELATION = {">=": "at or above", "<=": "at or below", ">": "above", "<": "below"}


def _scaled_bar(bar: float, judged: _Judged, intent: QueryIntent, unit: str | None) -> tuple[float, str] | None:
    """A bar as the answer states it, with the words of its scale: an amount the question writes with its scale
    ("$400 billion") in the scale the answer states amounts in (" USD millions"); None when the question writes an
    amount for a metric that is none."""
    if not judged.amount:
        return bar, ""
    if unit != "USD":
        return None
    scale = (intent.unit_hint or "").removeprefix("USD ").strip()
    scale = scale if scale in SCALE_FACTORS else "millions"
    return bar / SCALE_FACTORS[scale], f" USD {scale}"


def _stability(tree: PlanNode, judged: _Judged, intent: QueryIntent, catalogue: Catalogue, words: str, *,
               read: tuple[str, ...], definitions: tuple[str, ...]) -> MetricPlan:
    """"Are its gross margins consistent (not fluctuating more than 2% a year)": the metric in each of the years
    asked (one or none asked: the latest ``[stable] years`` ending then), every yearly move within the band the
    question writes or judgements.toml states (percentage points for a rate, percent for anything else)."""
    spec = _judgements()["stable"]
    years = asked_years(intent)
    if tree.kind == "years":  # "gross margin between FY2021 and FY2023": the years written beside it
        years = tuple(sorted({int(y) for y in tree.name.split(",")}))
        tree = tree.args[0]
    if len(years) >= 2:  # every year of the span
        years = tuple(range(years[0], years[-1] + 1))
    else:
        latest = years[-1] if years else None
        if latest is None:
            return MetricPlan("unread", unread=tuple(judged.words), judge="band",
                              note="stability is judged over years: no year is named or resolved")
        # "each of the last four years": four years' values; a direction "in each of the last two years" is two
        # yearly moves, three years' values
        count = intent.year_run + (judged.test in ("rising", "falling")) if intent.year_run > 1 else int(spec["years"])
        years = tuple(range(latest - count + 1, latest + 1))
    dim = dimension_of(tree, catalogue)
    rate = dim.unit == "percent"
    band = judged.bar if judged.bar is not None else float(spec["rate_points"] if rate else spec["other_percent"])
    node = PlanNode("average", args=(tree,), backs=tuple(years[-1] - y for y in reversed(years)))
    plan = finish_plan(node, replace(intent, fiscal_years=years, annual_years=years), catalogue, words, read=read,
                       definitions=definitions)
    said, what = " ".join(judged.words), plan_words(tree, catalogue)
    if judged.test.startswith("every"):  # the level in every year: the worst year decides
        test = judged.test.removeprefix("every")
        relation = _RELATION[test]
        scaled = _scaled_bar(judged.bar if judged.bar is not None else 0.0, judged, intent, dim.unit)
        if scaled is None:
            return MetricPlan("unread", unread=(said,), note=f"'{said}' writes an amount; {what} is no amount")
        bar, unit = scaled[0], scaled[1] or ("%" if rate else "")
        criterion = (f"'{said}' read as {what} {relation} {bar:,g}{unit} in every year from FY{years[0]} to "
                     f"FY{years[-1]}")
        return replace(plan, judge=judged.test, bar=bar, criterion=criterion) if plan.status == "complete" else plan
    if judged.test in ("rising", "falling"):
        way = "higher" if judged.test == "rising" else "lower"
        criterion = (f"'{said}' read as {what} {way} in every year from FY{years[0]} to FY{years[-1]} than in the "
                     "year before")
        return replace(plan, judge=judged.test, criterion=criterion) if plan.status == "complete" else plan
    moved = "percentage points" if rate else "percent"
    criterion = (f"'{said}' read as every yearly move of {what} from FY{years[0]} to FY{years[-1]} within {band:g} "
                 f"{moved}" + ("" if judged.bar is not None else " (the band resources/reader/judgements.toml "
                               "states)"))
    return replace(plan, judge="band", bar=band, criterion=criterion) if plan.status == "complete" else plan


@lru_cache(maxsize=1)
def _parts_toml() -> dict:
    return tomllib.loads((_READER / "parts.toml").read_text(encoding="utf-8"))


def _wholes() -> dict[str, str]:
    """A statement section named as the part asked ("liability") -> the total its lines add up to."""
    return dict(_parts_toml()["wholes"])


def _part_kinds(noun: str) -> tuple[str, ...]:
    """The kinds of parts (``resources/reader/parts.toml`` [kinds]) a question's noun names: "geographic segments"
    names a region and a segment, "reporting unit" a segment."""
    return tuple(kind for kind, words in _parts_toml()["kinds"].items()
                 if any(re.search(rf"\b{re.escape(w)}", noun, re.IGNORECASE) for w in words))


def _named_part(phrase: list[_Tok], scope: list[str], entities: Sequence[str],
                catalogue: Catalogue) -> MetricPlan | None:
    """"How much revenue did the Health Care segment generate", "net sales of the North America segment", "revenue
    in the Americas": one amount of the catalogue, of a part the question names (engine.intent.topics.entities_in),
    read from the table of the total's parts the filing prints (engine.answer.parts). None when a scope word asks
    for something else than the part (an adjusted measure, guidance), or no one amount is named."""
    said = [w for w in scope if w.lower() in _parts_toml()["named"]["scope"]]  # "domestic revenue"
    # ("US" alone is no part's name, "U.S. GAAP"; beside another part it is one: "US sales growth compared to
    # international")
    us = [e for e in entities if e.lower().rstrip(".") in ("u.s", "us")]
    if us and [e for e in entities if e not in us] + said:
        names = [e for e in entities if e not in us[1:] and e not in said] + said
    else:  # ("revenue in the U.S." names it by the form with its full stop left out)
        names = [e for e in entities if e.lower() not in ("u.s.", "us")] + said
    nouns = [w for w in scope if _part_kinds(w) and w not in said]
    placed = [w for w in scope if names_a_geography(w)]
    named = " ".join(names).lower()
    if not names or any(w not in nouns and w not in placed and w not in said and w.lower() not in named
                        for w in scope):
        return None
    metrics = list(dict.fromkeys(t.value for t in phrase if "METRIC" in t.kinds))
    if len(metrics) != 1 or metrics[0] not in catalogue.metrics or catalogue.metrics[metrics[0]].unit != "USD":
        return None
    noun = nouns[0].lower() if nouns else "region" if placed else "segment"
    tree = metric_node(metrics[0], catalogue, {})
    # a name written with the company's possessive ("Amazon's North America"): the part's words follow it
    shown = tuple(dict.fromkeys(re.sub(r"^.*?\w['’]s?\s+", "", n) for n in names))
    compared = _measures_compared(phrase)
    growth = any(t.kinds & {"GROWTH", "CHANGE", "PERFORMANCE", "UP", "DOWN"} and t not in compared for t in phrase)
    return MetricPlan("parts", tree, "percent" if growth else "USD",
                      f"{metrics[0]}{' growth' if growth else ''} of the {noun} {' / '.join(shown)}",
                      read=(f"{' / '.join(shown)}: {'the ' + noun + 's' if len(shown) > 1 else 'a ' + noun} the "
                            "question names, of the parts of a total the filing prints",
                            f"{metrics[0]}: {_metric_words(tree, catalogue)}",
                            *(("growth: against the year before, from the table's comparative column",) if growth
                              else ())),
                      choice="named", parts=noun, part_kinds=_part_kinds(noun),
                      measure="growth" if growth else "value", included=shown)


def _parts_choice(sentences: list[list[_Tok]], catalogue: Catalogue) -> MetricPlan | None:
    """"Which segment had the lowest net revenue", "which region had the worst topline performance", "in which
    reporting segment did sales increase the most, excluding Embedded": a choice among the parts of a total the
    filing prints (its segments, regions, product lines), of one amount the catalogue names, by its value or, when a
    change or performance is asked, its growth against the year before. None when the sentence is not one."""
    toks = [t for sent in sentences for t in sent]
    member = next((t for t in toks if "MEMBER" in t.kinds), None)
    if member is None or not any(t.kinds & {"WHICH"} for t in toks):
        return None
    best = any(t.kinds & {"MOST", "BEST"} for t in toks)
    worst = any(t.kinds & {"LEAST", "WORST"} for t in toks)
    metrics = list(dict.fromkeys(t.value for t in toks if "METRIC" in t.kinds))
    if not metrics:  # "the largest liability": a section of a statement, the parts of its total
        noun = member.text.lower()
        metrics = [total for stem, total in sorted(_wholes().items(), key=lambda w: -len(w[0])) if stem in noun][:1]
    profit = _parts_toml()["profit"]
    said = " ".join(t.text.lower() for t in toks)
    losing = any(re.search(rf"(?<!\w){re.escape(w)}(?!\w)", said) for w in profit["loss"])
    by_profit = not metrics and (losing or any(re.search(rf"(?<!\w){re.escape(w)}(?!\w)", said)
                                                for w in profit["gain"]))
    if by_profit:  # "which segment lost the most money": no amount named, the parts' profit (the most lost: lowest)
        metrics = [profit["amount"]]
    defaulted = not metrics and any(t.kinds & {"PERFORMANCE", "GROWTH", "CHANGE", "UP", "DOWN"} for t in toks)
    if defaulted:  # "which segment grew fastest": no amount named, the parts' revenue (what parts are read by)
        metrics = ["revenue"]
    if best == worst or len(metrics) != 1 or metrics[0] in catalogue.metrics \
            and catalogue.metrics[metrics[0]].unit != "USD":
        return None  # no superlative, both, or not one amount
    # (an amount the catalogue does not compute, a company's own measure as its segment table prints it, "Adjusted
    # Property EBITDAR": the parts of the printed total that names it; its rows are the company's figures)
    growth = any(t.kinds & {"PERFORMANCE", "CHANGE", "GROWTH", "UP", "DOWN"} for t in toks)
    falling = any("DOWN" in t.kinds for t in toks)  # "the biggest drop": the lowest growth
    end = "largest" if (best != falling) != (by_profit and losing) else "smallest"
    excluded: list[str] = []
    for i, t in enumerate(toks):  # "excluding Embedded", "except Corporate and Other": the names written after
        if t.text.lower() in ("excluding", "except", "besides"):
            run: list[str] = []
            for x in toks[i + 1:]:  # (a named region is read as a scope word: "Americas")
                if not (x.kinds & {"NAME"} or "SCOPE" in x.kinds and x.text[:1].isupper()) \
                        and not (run and x.text.lower() in ("and", "&")):
                    break
                run.append(x.text)
            if run:
                excluded.append(" ".join(run).removesuffix(" and").removesuffix(" &"))
    name = metrics[0]
    own = name not in catalogue.metrics
    tree = PlanNode("metric", name) if own else metric_node(name, catalogue, {})
    words = f"the {member.text.lower()} with the {end} {name}{' growth against the year before' if growth else ''}"
    meant = "as the table of its parts prints it (the company's own measure)" if own else _metric_words(tree, catalogue)
    if defaulted:
        meant += " (the question names no amount: the parts' revenue)"
    elif by_profit:
        meant += (f" (the question names no amount but {'a loss' if losing else 'a profit'}: the parts' {name}"
                  + (", the most lost the lowest" if losing else "") + ")")
    return MetricPlan("parts", tree, "percent" if growth else "USD", words, read=(f"{member.text}: the parts of a "
                      f"total the filing prints", f"{name}: {meant}"), choice=end,
                      parts=member.text.lower(), part_kinds=_part_kinds(member.text), measure="growth" if growth
                      else "value", excluded=tuple(excluded))


def _every_part_asked(toks: list[_Tok], member: _Tok) -> bool:
    """Whether the words ask for every part, however the part's noun is said: "revenue by segment", "per region",
    "each segment", "across its service offerings", "the revenue breakdown", "the distribution of sales"
    (``resources/reader/parts.toml`` [every])."""
    every = _parts_toml()["every"]
    at = toks.index(member)
    if at and toks[at - 1].text.lower() in every["before"]:
        return True
    said = " ".join(t.text.lower() for t in toks)
    return any(re.search(rf"\b{re.escape(w)}\b", said) for w in every["words"])


def _parts_list(sentences: list[list[_Tok]], catalogue: Catalogue) -> MetricPlan | None:
    """"What are the geographies X operates in", "which segments does X report": the parts of a total the filing
    prints, every one, by the amount named or else by revenue (what a company's parts are read by), with each part's
    share. None when the sentence is not one: no parts named in the plural, a section of a statement ("what are the
    current liabilities" asks their amount), a superlative (a choice: see :func:`_parts_choice`), a bar or a change,
    or more than one amount."""
    toks = [t for sent in sentences for t in sent]
    member = next((t for t in toks if "MEMBER" in t.kinds), None)
    compared = _measures_compared(toks)
    if member is None or not (_every_part_asked(toks, member)
                              or any("WHICH" in t.kinds for t in toks) and member.text.lower().endswith("s")) \
            or any(t.kinds & {"MOST", "LEAST", "BEST", "WORST", "PCT", "ABOVE", "BELOW", "NUMBER", "CHANGE", "GROWTH",
                              "PERFORMANCE", "UP", "DOWN", "MARGIN", "RATIO", "YOY"} and t not in compared
                   for t in toks):
        return None  # (a choice, a bar, or the parts' change: "the drivers of revenue growth in the segments")
    if any(stem in member.text.lower() for stem in _wholes()):
        return None  # "what are the current liabilities": the amount, not its lines
    metrics = list(dict.fromkeys(t.value for t in toks if "METRIC" in t.kinds)) or ["revenue"]
    if any(m not in catalogue.metrics or catalogue.metrics[m].unit != "USD" for m in metrics):
        return None
    # "compare to the costs incurred in these segments": the other side's words that name no amount are said unread
    # (the answer gives the amounts it read and names what it did not, never one amount for the comparison)
    other = [t.text for c in compared[:1] for t in toks[toks.index(c) + 1:]
             if not t.kinds & {"FILLER", "TO", "MEMBER", "SCOPE", "BOUNDARY", "COMMA", "NAME", "PERIOD", "YEAR",
                               "METRIC"}] if len(metrics) == 1 else []
    every = _parts_toml()["every"]
    costs = [w for w in other if w.lower() in every["costs"]]
    if costs and every["costs_read_as"] not in metrics:  # "… compare to the costs incurred in these segments"
        metrics.append(every["costs_read_as"])
        other = [w for w in other if w not in costs]
    said = f"read as {every['costs_read_as']}, the costs a table of parts prints for each"
    costs_read = (f"{' '.join(costs)}: {said}",) if costs else ()
    name, also = metrics[0], tuple(metrics[1:])
    tree = metric_node(name, catalogue, {})
    return MetricPlan("parts", tree, "USD", f"every one of the {member.text.lower()} the filing prints, by "
                                            f"{' and '.join(metrics)}",
                      read=(f"{member.text}: the parts of a total the filing prints, every one",
                            *(f"{m}: {_metric_words(metric_node(m, catalogue, {}), catalogue)}" for m in metrics),
                            *costs_read),
                      unread=tuple(other), choice="all", parts=member.text.lower(),
                      note=f"the question's '{' '.join(costs)}' {said}" if costs else "",
                      part_kinds=_part_kinds(member.text), measure="value", also=also)


def _measures_compared(toks: list[_Tok]) -> list[_Tok]:
    """The words that set one amount of a total's parts beside another ("how does revenue by segment compare to
    the costs in these segments"; ``resources/reader/parts.toml`` [every] measures_compared), where the question
    names fewer than two periods (with two, "compare Q3 to Q2", it asks a change)."""
    if sum(1 for t in toks if t.kinds & {"YEAR", "PERIOD", "YEARS"}) >= 2:
        return []
    said = _parts_toml()["every"]["measures_compared"]
    return [t for t in toks if "CHANGE" in t.kinds and t.text.lower() in said]


def _parts_share(sentences: list[list[_Tok]], judged: _Judged, catalogue: Catalogue) -> MetricPlan | None:
    """"Are there any product categories that represent more than 20% of revenue", "does any segment account for
    less than 5% of sales": which of the parts of a total the filing prints (its segments, categories, regions)
    have a share of it above (below) the bar the question writes, in percent. None when the question is not one:
    no parts named, no bar in percent, or not one amount."""
    toks = [t for sent in sentences for t in sent]
    member = next((t for t in toks if "MEMBER" in t.kinds), None)
    if member is None or judged.test not in (">=", "<=") or judged.bar is None \
            or not any("PCT" in t.kinds for t in toks):
        return None
    if any(t.kinds & {"CHANGE", "GROWTH", "PERFORMANCE", "MARGIN", "RATIO", "YOY"} for t in toks):
        return None  # "more than 20% revenue growth": a bar on the parts' growth, not their share
    metrics = list(dict.fromkeys(t.value for t in toks if "METRIC" in t.kinds))
    if len(metrics) != 1 or metrics[0] not in catalogue.metrics or catalogue.metrics[metrics[0]].unit != "USD":
        return None
    name = metrics[0]
    tree = metric_node(name, catalogue, {})
    test = " ".join(judged.words)
    words = f"the {member.text.lower()} whose share of {name} is {test}"
    return MetricPlan("parts", tree, "percent", words, read=(f"{member.text}: the parts of a total the filing prints",
                      f"{name}: {_metric_words(tree, catalogue)}", f"{test}: each part's share of the total"),
                      choice="largest", parts=member.text.lower(), part_kinds=_part_kinds(member.text),
                      measure="share", judge=judged.test, bar=judged.bar,
                      criterion=f"a share of {name} {test}")


# "higher", "lower", "more", "less"; "faster", "slower" (a speed: RATE)
_COMPARATIVE = frozenset({"MOST", "LEAST", "UP", "DOWN", "ABOVE", "BELOW", "RATE"})
# comparatives of an amount (not superlatives: "most", "largest" choose among parts)
_MORE_OR_LESS = frozenset({"more", "less", "fewer", "larger", "bigger", "greater", "smaller"})


def _against_another(after: Sequence[_Tok]) -> bool:
    """Whether a move is compared with another metric's right after it: "(grow) faster than revenue", "(rise) more
    than sales", "(fall) less than net income" — a comparative and "than" (or a word of both), then a metric."""
    rest = [x for x in after if not x.kinds <= _FRAME]
    if rest and rest[0].kinds & {"EXCEED", "SHORT"}:
        rest = rest[1:]
    elif len(rest) > 1 and rest[0].kinds & {"MOST", "LEAST"} and "THAN" in rest[1].kinds:
        rest = rest[2:]
    else:
        return False
    return bool(rest) and "METRIC" in rest[0].kinds


def _another_after(phrase: Sequence[_Tok], i: int) -> bool:
    """Whether a metric other than those before ``phrase[i]`` is named after it."""
    before = {x.value for x in phrase[:i] if "METRIC" in x.kinds}
    return any("METRIC" in x.kinds and x.value not in before for x in phrase[i + 1:])


def _than_another(after: Sequence[_Tok]) -> bool:
    """Whether a metric is named after a "than" that follows, with a metric before it: the other side of "more capex
    than cash from operations" (not "more in FY2022 than in FY2021")."""
    than = next((k for k, x in enumerate(after) if "THAN" in x.kinds), -1)
    return than > 0 and any("METRIC" in x.kinds for x in after[:than]) and \
        any("METRIC" in x.kinds for x in after[than + 1:])


def _more_of(t: _Tok, after: Sequence[_Tok]) -> bool:
    """Whether ``t`` says more or less of the metric it stands before ("did it take on more debt", "book less
    revenue"; "less" is also a minus)."""
    return (t.text.lower() in _MORE_OR_LESS and bool(t.kinds & {"MOST", "LEAST"})
            and t.kinds - {"MINUS"} <= _COMPARATIVE | _FRAME
            and "METRIC" in next((x for x in after if not x.kinds <= _FRAME), t).kinds)
_PERIOD_NOUN = re.compile(r"(?:fiscal\s+)?(?:years?|periods?)", re.IGNORECASE)


def _year_choice(sentences: list[list[_Tok]], years: tuple[int, ...]) -> tuple[str, tuple[int, ...]] | None:
    """"In which year between FY2021 and FY2023 was revenue the highest", "which year had the higher margin,
    FY2022 or FY2023": a superlative choosing among the years asked, not among amounts. Returns which end is
    asked ("largest" | "smallest") and the years to choose among: every year of a span written "between A and
    B", else the years written."""
    if len(years) < 2:
        return None
    for sent in sentences:
        which = [i for i, t in enumerate(sent) if "WHICH" in t.kinds]
        listed = any("OR" in t.kinds and _names_a_year(sent[i + 1:]) and _names_a_year(sent[:i][::-1])
                     for i, t in enumerate(sent))
        if not (listed or any(_names_a_year(sent[i + 1:]) for i in which)):
            continue
        first = next((t for t in sent if t.kinds & {"MOST", "LEAST"}), None)
        if first is None:
            continue
        end = "largest" if "MOST" in first.kinds and not ("LEAST" in first.kinds and first.text.lower() == "less") \
            else "smallest"
        between = any(t.text.lower() == "between" for t in sent)
        return end, tuple(range(years[0], years[-1] + 1)) if between else years
    return None


def _names_a_year(after: list[_Tok]) -> bool:
    """Whether the words after a "which" (or on a side of an "or") name years: "which year", "which of FY2022 and
    FY2023", "in FY2022 or in FY2023"."""
    rest = [t for t in after if t.text.lower() not in ("of", "the", "in", "for", "during")]
    return bool(rest) and ("YEAR" in rest[0].kinds or _PERIOD_NOUN.fullmatch(rest[0].text) is not None)


def _choose_years(tree: PlanNode, intent: QueryIntent, catalogue: Catalogue, words: str, end: str,
                  among: tuple[int, ...], *, read: tuple[str, ...], definitions: tuple[str, ...]) -> MetricPlan:
    """The plan of a choice among years: the metric placed at the latest year, taken at each year (``backs``)."""
    latest = among[-1]
    one = finish_plan(tree, replace(intent, fiscal_years=(latest,), annual_years=(latest,), quarters=()), catalogue,
                      words, read=read, definitions=definitions)
    if one.status != "complete" or one.tree is None:
        return one
    backs = tuple(latest - y for y in reversed(among))
    node = PlanNode("choice", end, (one.tree,), backs=backs)
    return replace(one, tree=node, choice=end, words=f"the year of {', '.join(f'FY{y}' for y in among)} with "
                                                      f"the {end} {one.words}")


def read_plan(intent: QueryIntent, catalogue: Catalogue, issuers: Sequence[IssuerRef] = ()) -> MetricPlan:
    """Read the metric a question asks for into a plan (see the module's docstring)."""
    text = " ".join(intent.question.split())
    toks = _tag(text, issuers)
    entities = {e.lower() for e in intent.entities}  # named segments, geographies, products (engine.intent.topics)
    for i, t in enumerate(toks):
        if not t.kinds & {"NAME", "WORD"}:
            continue
        # an entity of one word or several ("North America", "Intelligent Cloud"): each of its words is scope (a name
        # of several words is otherwise frame, word by word, and the total would be answered for the part)
        j = i
        while j < len(toks) and toks[j].kinds & {"NAME", "WORD"} and \
                text[t.start:toks[j].end].lower().rstrip(".") not in entities:
            j += 1
        if j < len(toks) and toks[j].kinds & {"NAME", "WORD"} and not _CURRENCY.match(text, toks[j].end):
            for x in toks[i:j + 1]:
                x.kinds = frozenset({"SCOPE"})
    named_parts = _names_of_parts(toks, text)
    entities |= {n.lower() for n in named_parts}
    sentences = _sentences(toks)
    reading = _Reading()
    months = intent.ytd_months
    years = asked_years(intent)

    # definitions, in every sentence
    defs: list[_Definition] = []
    used: dict[int, set[int]] = {}
    for n, sent in enumerate(sentences):
        found, positions = _definitions(sent)
        defs += found
        used[n] = positions
    asked_idx = _asked(sentences)
    phrase: list[_Tok] = []
    for n in asked_idx:
        if (chosen := _is_choice(sentences[n], catalogue)) is not None:
            if len(years) > 1:
                return MetricPlan("unread", note="a choice among amounts over several years is not read",
                                  unread=("which … over several years",))
            options = tuple(metric_node(m, catalogue, {}) for m in chosen[0])
            return MetricPlan("complete", PlanNode("choice", chosen[1], options), "USD",
                              f"which of {', '.join(chosen[0])} is the {chosen[1]}",
                              read=tuple(f"{m}: {catalogue.metrics[m].words}" for m in chosen[0]),
                              choice=chosen[1], flow_months=months)
        own = _phrase(sentences[n], used[n])
        if not any(t.kinds & {"METRIC", "DEFINED_REF", "WORD", "NAME", "ASPECT"} for t in own):
            # "Kraft Heinz 2019 inventory turns: cost of sales divided by …?": the asked metric is what it defines
            own = next((d.subject for d in defs if d.subject and d.subject[0].start >= sentences[n][0].start and
                        d.subject[-1].end <= sentences[n][-1].end), own)
        phrase += own
    # names a definition gives: a catalogue metric's name, or any run of words ("unadjusted EBITDA")
    defined: dict[str, PlanNode] = {}
    names: dict[tuple[str, ...], str] = {}
    refs: dict[str, PlanNode] = {}
    for d in defs:
        subject = [t for t in d.subject if not t.pure_frame or t.kinds & {"NAME"}]
        if not subject:  # "computing it as …": the asked metric
            subject = [t for t in phrase if t.kinds & {"METRIC", "WORD", "NAME", "DEFINED_REF"}][:4]
        d.subject = subject
    pending = list(range(len(defs)))
    for _ in range(len(defs) + 1):  # definitions that use other definitions are read after them
        progress = False
        for i in list(pending):
            d = defs[i]
            expression = _substitute([t for t in _phrase(d.expression, set(), definition=True)], names)
            # a company's own measure written in the definition ("Adjusted EBIT as the numerator"): the statements do
            # not give it (the plan says so, below)
            company_words = [t.text for t in expression if "SCOPE" in t.kinds and "METRIC" not in t.kinds]
            expression = [t for t in expression if not ("SCOPE" in t.kinds and "METRIC" not in t.kinds)]
            tree = _parse(expression, refs)
            if tree is None:
                continue
            pending.remove(i)
            progress = True
            reading.scope += company_words
            ref = str(i)
            outside: list[str] = []
            tree = _resolve(tree, catalogue, defined, outside)
            if outside:
                reading.unread += [f"'{o}' in the definition of {d.text!r} (not a statement metric)" for o in outside]
            refs[ref] = PlanNode("metric", " ".join(t.text for t in d.subject), (tree,))
            key = _name_key(d.subject)
            names[key] = ref
            metrics = [t.value for t in d.subject if "METRIC" in t.kinds]
            if len(key) == 1 and len(metrics) == 1:  # "unadjusted EBITDA": the catalogue's EBITDA, as defined here
                defined[metrics[0]] = tree
                refs[ref] = PlanNode("metric", metrics[0], (tree,))
            reading.definitions.append(d.text)
        if not progress:
            break
    for i in pending:
        shown = [t.text for t in _phrase(defs[i].expression, set(), definition=True)]
        reading.unread.append(f"the definition {defs[i].text!r} ({' '.join(shown)})")
    # the asked metric
    hints = [m for t in phrase if "HINT" in t.kinds for m in t.value.split(",") if m]
    phrase = [t for t in phrase if "HINT" not in t.kinds]
    phrase, via = _named_parts(phrase)
    scope = [t.text for t in phrase if "SCOPE" in t.kinds and "METRIC" not in t.kinds] + reading.scope
    phrase = [t for t in phrase if not ("SCOPE" in t.kinds and "METRIC" not in t.kinds)]
    phrase = _substitute(phrase, names)
    # a bare noun ("cash", "equity") is the metric it names when nothing else asked is unread; beside a word not read
    # ("the cash proceeds from the separation") it is one more word not read, and names nothing
    alone = not any(t.kinds <= {"WORD", "NAME"} for t in phrase)
    for t in phrase:
        if "BARE" in t.kinds:
            t.kinds = frozenset({"METRIC"} if alone else {"WORD"})
    among = _year_choice([sentences[n] for n in asked_idx], years)
    asks_which_way = which_way(text) is not None  # "did it increase or decrease": a judgement, not a yes or no
    judged = (_judgement(phrase, between=len(asked_years(intent)) > 1 or len(intent.quarters) > 1)
              if (intent.yes_no or asks_which_way or judges_its_number(text)) and among is None else None)
    if judged is not None and judged.test in ("up", "down") and _every().search(text):
        # "has revenue grown each year": every yearly move in the direction, not the span's ends
        judged = replace(judged, test="rising" if judged.test == "up" else "falling")
    elif judged is not None and judged.test in _LEVELS and not (judged.moved or judged.multiple) and \
            _every().search(text) and (len(years) > 1 or intent.year_run > 1):
        # "has its free cash flow been negative every year from 2015 to 2018", "profitable in each of the last three
        # years": the level in every year of the span, not in the last alone
        judged = replace(judged, test=f"every{judged.test}")
    if judged is not None:  # "does it have an improving gross margin": the metric, and the test it is put to
        phrase = judged.rest
        if judged.quality and not any(t.kinds & {"METRIC", "DEFINED_REF", "NUMBER"} for t in phrase):
            # "is it a capital-intensive business": the quality names the metric
            # (the words around it frame the question: "would you call it", "a … business")
            tree = quality_tree(judged, catalogue)
            return _judge(tree, judged, intent, catalogue, judged.quality,
                          read=(f"{judged.quality}: {plan_words(tree, catalogue)}",), definitions=())
    elif not any("THAN" in t.kinds for t in phrase):
        # a superlative or comparative is the frame of a choice ("which year had the lower margin"); with a "than"
        # it asks by how much ("how much more revenue than cost of sales")
        phrase = [t for t in phrase if not (t.kinds & {"MOST", "LEAST"} and t.kinds <= _COMPARATIVE)]
    framing = {t.start for n in asked_idx for i, t in enumerate(sentences[n])
               if "ASPECT" in t.kinds and i and sentences[n][i - 1].text.lower() == "how"}
    if judged is None and framing and any(t.kinds & {"METRIC", "DEFINED_REF"} for t in phrase):
        # "how leveraged was it on a net debt to EBITDA basis": the aspect asked "how" frames the metric named, which
        # is asked ("SG&A efficiency" is no SG&A: its aspect word stays unread)
        phrase = _trimmed([t for t in phrase if t.start not in framing])
    unread = [t.text for t in phrase if t.kinds <= {"WORD", "NAME"}]
    named = [t.value for t in phrase if "METRIC" in t.kinds]
    if judged is not None:  # "are there any product categories that represent more than 20% of revenue"
        shares = _parts_share([sentences[n] for n in asked_idx], judged, catalogue)
        if shares is not None:
            return shares
    parts = None if intent.yes_no else _parts_choice([sentences[n] for n in asked_idx], catalogue)
    if parts is not None:  # "which segment had the highest revenue", "the largest liability"
        return parts
    # (two parts named, "the Healthcare and Consumer segments": those, not every one; see _named_part)
    listed = None if intent.yes_no or intent.relation == "explanation" or len(intent.entities) > 1 else _parts_list(
        [sentences[n] for n in asked_idx], catalogue)
    if listed is not None:  # "what are the geographies it operates in", "which segments does it report"
        return listed
    if judged is None and len(phrase) == 1 and "QUALITY" in phrase[0].kinds and \
            not _qualities()[phrase[0].value].over and _qualities()[phrase[0].value].test in (">=", "<="):
        # "what was its capital intensity": the measure of the quality, its value (not a judgement of it; a sign,
        # "profitable", "losing money", has none: "how does it lose money" asks of its business)
        tree = quality_tree(_Judged("", None, [], [], phrase[0].value), catalogue)
        return finish_plan(tree, intent, catalogue, phrase[0].text,
                           read=(f"{phrase[0].text}: {_qualities()[phrase[0].value].words}",))
    if not unread and not scope and not intent.yes_no and all(t.kinds <= _AROUND | _VERBAL for t in phrase) and \
            (verb := next(((name, t) for n in asked_idx for t in sentences[n] for name, rx in _verbs().items()
                           if rx.fullmatch(t.text)), None)) is not None:
        # "how much did Boeing lose in 2022": a verb of profit or loss and nothing else asked (not "earn per share"):
        # the company's net income
        name, t = verb
        phrase = [_Tok(t.start, t.end, t.text, frozenset({"METRIC"}), name)]
    if not phrase or not any(t.kinds & {"METRIC", "DEFINED_REF", "NUMBER"} for t in phrase):
        # no metric of the lexicon named ("how many stores"): not a statement metric; the passages answer it
        return MetricPlan("none", unread=tuple(unread), scope=tuple(scope), note="no metric named")
    if scope and (one := _named_part(phrase, scope, (*intent.entities, *named_parts), catalogue)) is not None \
            and not unread:
        return one  # "the Personal Computing segment's revenue": that part's row of the table of the total's parts
    if scope:
        return MetricPlan("scope", scope=tuple(scope), unread=tuple(unread),
                          note=f"'{' '.join(scope)}' asks for part of the company or its own measure, which the "
                               "statement facts do not give")
    outside = [m for m in named if m not in catalogue.metrics and m not in defined]
    if outside:
        return MetricPlan("outside", unread=tuple(unread), note=f"{', '.join(outside)}: not a metric the catalogue "
                          "computes from the statements", suggestions=_closest(outside[0], catalogue),
                          named=tuple(dict.fromkeys(outside)))
    kept = tuple(dict.fromkeys(m for m in named if m in catalogue.metrics))
    if unread or reading.unread:
        words = " ".join(unread)
        return MetricPlan("unread", unread=tuple(unread) + tuple(reading.unread), named=kept,
                          definitions=tuple(reading.definitions),
                          note=f"could not read {words!r} as part of a statement metric" if unread else
                          "a definition the question writes could not be read",
                          suggestions=_closest(" ".join(t.text for t in phrase), catalogue))
    tree = _parse(phrase, refs)
    if tree is None:
        # the soft words ("total", "of", "per") tried as frame
        lean = [t for t in phrase if not (t.kinds & {"QUALIFIER", "FILLER"})]
        tree = _parse(lean, refs) if lean != phrase else None
    if tree is None:
        words = " ".join(t.text for t in phrase)
        return MetricPlan("unread", unread=(words,), definitions=tuple(reading.definitions), named=kept,
                          note=f"could not compose {words!r} into one computation",
                          suggestions=_closest(words, catalogue))
    outside_names: list[str] = []
    tree = _resolve(tree, catalogue, defined, outside_names)
    if outside_names:
        return MetricPlan("outside", note=f"{', '.join(outside_names)}: not a metric the catalogue computes",
                          suggestions=_closest(outside_names[0], catalogue))
    if tree.kind == "metric" and (days := catalogue.metrics[tree.name].in_days if tree.name in catalogue.metrics
                                  else "") and _IN_DAYS.search(text):
        # "how many days did it take to sell its inventory": the turnover in days
        tree = metric_node(days, catalogue, defined)
    if tree.kind == "sub" and _TIMES_ASKED.search(text) and any("EXCEED" in t.kinds for t in phrase):
        # "how many times over did operating income cover interest expense": the one as a multiple of the other
        tree = PlanNode("div", args=tree.args)
    if any("RATE" in t.kinds for n in asked_idx for t in sentences[n]):
        # "how fast did revenue grow", "did SG&A grow faster than revenue": the speed of a move, in percent
        tree = _as_speed(tree, catalogue)
    if via:  # "returned to shareholders through dividends": the parts named, of the metric they are part of
        summed = _through(tree, via, catalogue, defined)
        if isinstance(summed, MetricPlan):
            return summed
        tree = summed
    for m in hints:  # "(using dividends paid and net income)": each must be an input of the plan
        if m not in catalogue.metrics or not item_names(metric_node(m, catalogue, defined)) <= item_names(tree):
            return MetricPlan("unread", unread=(m,), note=f"the question says it uses {m}, which the metric read "
                              f"({plan_words(tree, catalogue)}) does not use")
    reading.read += [f"{t.text}: {_metric_words(metric_node(t.value, catalogue, defined), catalogue)}"
                     for t in phrase if "METRIC" in t.kinds and t.value in catalogue.metrics]
    if judged is not None:
        return _judge(tree, judged, intent, catalogue, " ".join(t.text for t in phrase), read=tuple(reading.read),
                      definitions=tuple(reading.definitions))
    if intent.yes_no and among is None and tree.kind == "metric" and dimension_of(tree, catalogue).unit == "USD":
        # "has it paid dividends", "did it have any long-term debt": a yes/no of one amount asks whether any was
        # reported (the amount said with the answer)
        plan = finish_plan(tree, intent, catalogue, " ".join(t.text for t in phrase), read=tuple(reading.read),
                           definitions=tuple(reading.definitions))
        criterion = f"a yes/no question of an amount read as whether any was reported: {plan.words} above 0"
        return replace(plan, judge=">", bar=0.0, criterion=criterion) if plan.status == "complete" else plan
    if among is not None:
        return _choose_years(tree, intent, catalogue, " ".join(t.text for t in phrase), *among,
                             read=tuple(reading.read), definitions=tuple(reading.definitions))
    return finish_plan(tree, intent, catalogue, " ".join(t.text for t in phrase), read=tuple(reading.read),
                       definitions=tuple(reading.definitions))


def _as_speed(node: PlanNode, catalogue: Catalogue) -> PlanNode:
    """A move asked as a speed: an amount's change is its growth in percent (a percentage's move stays in points);
    two moves set against each other ("grew faster than") are both speeds."""
    if node.kind == "change" and dimension_of(node.args[0], catalogue).unit != "percent":
        return PlanNode("growth", args=node.args)
    if node.kind == "sub" and all(a.kind in ("change", "growth") for a in node.args):
        return replace(node, args=tuple(_as_speed(a, catalogue) for a in node.args))
    return node


def asked_years(intent: QueryIntent) -> tuple[int, ...]:
    """The fiscal years a question asks about, oldest first (a quarter's year for a quarter)."""
    if intent.quarters:  # a quarter's year; the same quarter of several years: each
        return tuple(sorted({int(q[:4]) for q in intent.quarters}))
    return tuple(sorted(set(intent.annual_years if intent.annual_years is not None else intent.fiscal_years)))


def finish_plan(tree: PlanNode, intent: QueryIntent, catalogue: Catalogue, words: str, *,
                read: tuple[str, ...] = (), definitions: tuple[str, ...] = (), reader: str = "grammar",
                note: str = "") -> MetricPlan:
    """A complete plan from the tree of the asked metric (``words``, as the question writes it): placed at the
    asked years, its unit by dimensional analysis, reconciled with the unit the question asks for — or "unread"
    when the expression has no unit an answer can have."""
    years = asked_years(intent)
    if years:
        tree = _place_years(tree, years[-1], years)
    try:
        dim = dimension_of(tree, catalogue)
    except DimensionError as exc:
        return MetricPlan("unread", tree=tree, note=f"the expression has no unit: {exc}", unread=(words,),
                          reader=reader)
    unit = dim.unit
    if unit is None:
        return MetricPlan("unread", tree=tree, note="the expression's unit is none an answer can have",
                          unread=(words,), reader=reader)
    asked = intent.unit_hint or ""
    if unit == "ratio" and asked == "percent":
        tree, unit = PlanNode("percent", args=(tree,)), "percent"
    elif unit != "USD" and asked.startswith("USD"):
        said = f"the question asks for {asked}; the expression is {_unit_words(dim)}, stated as such"
        note = "; ".join(x for x in (note, said) if x)
    elif unit in _AMOUNTS and asked == "percent" and tree.kind == "change":  # "change in revenue, in percent"
        tree, unit = PlanNode("growth", args=tree.args, backs=tree.backs), "percent"
    elif unit in _AMOUNTS and asked == "percent" and tree.kind not in ("growth", "cagr"):
        return MetricPlan("unread", tree=tree, unread=(words,), reader=reader,
                          note="the question asks for a percentage and the words read make an amount")
    months = intent.ytd_months
    return MetricPlan("complete", tree, unit, plan_words(tree, catalogue), read, (), (), definitions,
                      flow_months=months, note=note, reader=reader)


def unread_answer(plan: MetricPlan) -> AnswerResult:
    """The answer to a numeric question whose metric was not fully read: no number; what was read, what was not,
    and the closest metrics the catalogue computes."""
    parts = [f"could not read {', '.join(repr(u) for u in plan.unread)}" if plan.unread else plan.note]
    if plan.read:
        parts.append("read: " + "; ".join(plan.read))
    if plan.note and plan.unread:
        parts.append(plan.note)
    if plan.suggestions:
        parts.append("the closest metrics computed from the statements: " + ", ".join(plan.suggestions))
    text = "No number is given: " + ". ".join(parts)
    return AnswerResult("not_answerable", text, method="reader", reason="; ".join(parts))


def unread_words(plan: MetricPlan) -> list[str]:
    """The single words of a plan's unread phrases, in order (what a model's plan must explain)."""
    return list(dict.fromkeys(w for u in plan.unread for w in _WORD.findall(u) if w[0].isalpha()))


def is_relation(word: str) -> bool:
    """Whether a word may name a relation between amounts (``resources/reader/relations.txt``: "intensity",
    "cushion", "share"), as a model's plan may read it; a word of a thing the statements do not count is none."""
    return word_list("relations").fullmatch(word) is not None


def asks_a_number(intent: QueryIntent) -> bool:
    """Whether a question whose metric was read asks for its value: the shape reader says numeric, or its asked
    sentence is neither a yes/no nor a textual question ("Acme FY2023 revenue?", "What was X's cash coverage?")."""
    return intent.numeric or is_numeric(core_question(" ".join(intent.question.split())), True)
