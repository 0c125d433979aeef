"""The shape of a question: which sentences ask it, whether it wants a number or prose, whether it
compares, and whether the answer has to be calculated.

Decisions worth knowing:
- The asked question is its "?" sentences, else whatever is not an instruction ("Round to ...").
- Yes/no questions are textual even when a number decides them; ``needs_calculation`` can still be true.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from engine.settings import RESOURCES_DIR
from engine.vocab.lexicon import _DERIVED, find_metrics
from engine.vocab.sections import vocab as section_vocab

_ABBREV = frozenset({"inc", "co", "corp", "ltd", "vs", "no", "etc", "jr", "sr", "st", "mr", "ms", "dr",
                    "approx", "e.g", "i.e", "u.s"})
_INSTRUCTION = re.compile(r"(?:please|answer|round|give|provide|respond|base|assume|you\s+are|here's|if\b|"
                          r"we\s+(?:need|want)|define|\S+(?:\s+\S+){0,5}\s+is\s+defined)", re.IGNORECASE)
_AUX = r"is|are|was|were|do|does|did|has|have|had|can|could|will|would|should"
_QWORD = re.compile(rf"(?:what|how|which|why|who|whom|{_AUX})\b")
_YESNO = re.compile(rf"(?:{_AUX}|shall|may)\b")
_NUM_LEAD = re.compile(r"(?:what|how|calculate|compute|estimate|determine|find|give|provide|roughly|"
                       r"approx\w*)\b")
_HOW_MUCH = re.compile(r"\bhow\s+(?:much|many)\b|"
                       r"\bwhat\s+(?:percent|percentage|(?:portion|proportion|fraction|share)(?=\s+of\b))\b")
_TEXTUAL = re.compile(
    r"\b(?:why|who|whom|which|describe|explain|summari[sz]e|outline|list|discuss\w*|analy[sz]e|examine|"
    r"elaborate|identify|drove|drives|driving|drivers?|driven|reasons?|factors?|caused|impacts?|impacted|"
    r"affect(?:s|ed)?|"
    r"effects?|implications?|relationship|relate[sd]?|correlat\w*|align\w*|connect\w*|insights?|strateg\w*|"
    r"polic(?:y|ies)|risks?|legal|proceedings|nature|focus|priorit\w*|correspond\w*|reflect\w*|suggest\w*|"
    r"indicat\w*|influenc\w*|assess\w*|consequences?|repercussions?|patterns?)\b")
_NUM_NOUN = re.compile(r"\b(?:amount|total|ratio|figures?|number|value|cagr|percent\w*|margins?|rate|"
                       r"quantity|sum|average|times|magnitude|scale|size|extent)\b|%")
# "what <words> <plural noun> [<of what>] <verb>": the noun heads what is asked, and these name things described,
# not counted ("What production rate changes is Boeing forecasting", "What cost initiatives did it announce": the
# rate modifies the changes; "What changes in debt and interest obligations did Amazon disclose": the debt is what
# the changes are of)
_DESCRIBED = re.compile(rf"what\s+(?:[\w&'’-]+\s+){{0,4}}?(?:changes|plans|developments|initiatives|actions|steps|"
                        rf"events|programs|projects|products|services|transactions|agreements)"
                        rf"(?:\s+(?:in|of|to|for|on|regarding|concerning|around|about)(?:\s+[\w&'’-]+){{1,6}}?)?"
                        rf"\s+(?:{_AUX}|will)\b")
_COMPARE = re.compile(
    r"\b(?:yoy|qoq|year[\s-]+(?:over|on)[\s-]+year|quarter[\s-]+(?:over|on)[\s-]+quarter|compar\w*|versus|vs|"
    r"relative\s+to|(?:in|de)creas\w*|declin\w*|drop\w*|grow\w*|grew|ris(?:e|es|en|ing)|rose|f[ae]ll\w*|"
    r"chang\w*|trend\w*|fluctuat\w*|evol\w*|shift\w*|differ\w*|improv\w*|deteriorat\w*|cagr|over\s+time|"
    r"historical\w*|sequential\w*|stack\s+up|measure\s+up|vari(?:ed|es|ations?)|movements?|patterns?|"
    r"(?:quarter|year|period)\s+to\s+(?:quarter|year|period)|"
    r"(?:across|throughout|over)\s+(?:the\s+)?(?:\w+\s+){0,2}(?:quarters|periods|years))\b", re.IGNORECASE)
# clauses: a "?", a ";", ", and", "and" before a question word or before a yes/no question of a pronoun ("… and
# was it higher than in FY2021")
_CLAUSE_SPLIT = re.compile(rf"\?|;|,\s*and\s+|\band\s+(?=(?:how|what|which|why)\b|(?:{_AUX})\s+"
                           r"(?:it|that|this|they|these|those)\b)")
_PERIOD_PAIR = re.compile(r"\bbetween\b.*\band\b|\bfrom\b.*\bto\b", re.IGNORECASE)
_CALC = re.compile(
    r"\b(?:calculate|compute|compar\w*|ratio|margins?|average|avg|cagr|growth|grew|chang\w*|"
    r"(?:in|de)creas\w*|yoy|qoq|year[\s-]+over[\s-]+year|turnover|difference|proportion\w*|"
    r"percent(?:age)?\s+of|how\s+many\s+times)\b|%\s*(?:of|margin)|\bas\s+a\s*(?:%|percent)", re.IGNORECASE)
_DEFINITION = re.compile(r"\bis\s+defined\s+as\b|\bdefine\s[^.?]*\bas\b", re.IGNORECASE)
_EXPLAIN = re.compile(r"\b(?:why|drove|drives|drivers?|reasons?|factors?|caused|explain)\b", re.IGNORECASE)


def _sentences(text: str) -> list[str]:
    """Split on . ? ! : ; before a space, keeping the mark and skipping abbreviations such as "Inc."."""
    out, start = [], 0
    for m in re.finditer(r"[.?!:;](?=\s|$)", text):
        word = re.search(r"[\w.]*$", text[start:m.start()])
        if m.group() == "." and word and (word[0].lower() in _ABBREV or len(word[0]) == 1):
            continue
        out.append(text[start:m.end()].strip())
        start = m.end()
    return [s for s in [*out, text[start:].strip()] if s]


def core_question(text: str) -> str:
    """The asked question: the "?" sentences of ``text``, else its sentences that are not instructions."""
    sents = _sentences(text)
    return " ".join(s for s in sents if s.endswith("?")) or " ".join(
        s for s in sents if not _INSTRUCTION.match(s))


def _lead(clause: str) -> str:
    """The clause from its question word on, past "In the Q2 2023 10-Q, ..." or "Using only ..., "."""
    low = clause.lower().strip()
    if _QWORD.match(low):
        return low
    m = re.search(rf",\s*((?:{_QWORD.pattern}).*)", low)
    return m[1] if m else low


def _clause_numeric(clause: str) -> bool:
    lead = _lead(clause)
    if _HOW_MUCH.search(lead):
        return True
    if _YESNO.match(lead) or _TEXTUAL.search(lead) or _DESCRIBED.match(lead):
        return False
    return bool(_NUM_LEAD.match(lead) and (find_metrics(lead) or _NUM_NOUN.search(lead)))


@lru_cache(maxsize=1)
def _which_way() -> re.Pattern[str]:
    """Two directions offered as the answer ("increase or decrease", "go up or down", "rise or fall"): the
    vocabulary's UP and DOWN words (``resources/reader/vocabulary.toml``), either way round, and its EITHER words."""
    data = tomllib.loads((RESOURCES_DIR / "reader" / "vocabulary.toml").read_text(encoding="utf-8"))

    def alt(kind: str) -> str:
        return "|".join(f.replace(" ", r"[\s-]+") for f in sorted(data[kind]["forms"], key=len, reverse=True))

    up, down, either = alt("UP"), alt("DOWN"), alt("EITHER")
    return re.compile(rf"\b(?:(?:{up})\s+or\s+(?:{down})|(?:{down})\s+or\s+(?:{up})|{either})\b", re.IGNORECASE)


def which_way(text: str) -> re.Match[str] | None:
    """Where a question offers two directions as its answer ("did it increase or decrease"), or None."""
    return _which_way().search(text)


def is_yes_no(core: str) -> bool:
    """Whether the asked question opens as a yes/no question ("Does …", "Is …", "Has …", "Did …") and does not
    offer its answer's alternatives ("Did it increase or decrease?" asks which way)."""
    clauses = [c for c in _CLAUSE_SPLIT.split(core) if c.strip()]
    return bool(clauses) and _YESNO.match(_lead(clauses[0])) is not None and which_way(clauses[0]) is None


def is_numeric(core: str, asks_format: bool) -> bool:
    """Whether any clause of the question asks for a number; a stated unit or rounding (``asks_format``)
    also makes it numeric unless the question is a yes/no or textual one."""
    clauses = [c for c in _CLAUSE_SPLIT.split(core) if c.strip()]
    if any(_clause_numeric(c) for c in clauses):
        return True
    lead = _lead(clauses[0]) if clauses else ""
    return asks_format and not (_YESNO.match(lead) or _TEXTUAL.search(lead) or _DESCRIBED.match(lead))


def compound_parts(text: str) -> tuple[str, str] | None:
    """A question that asks for a number, then for something in words about it ("What was X's gross margin in
    FY2023, and what did management say drove it?"): (the number's clause, the rest), or None. Its clauses are cut
    where the shape reader cuts them (a "?", a ";", ", and", "and" before how/what/which/why); the first must ask for
    a number, and the rest must ask a question of its own that does not ("how does it compare …", "what drove it",
    "is it healthy")."""
    core = core_question(" ".join(text.split()))
    cut = _CLAUSE_SPLIT.search(core)
    if cut is None:
        return None
    first, rest = core[:cut.start()].strip(" ,"), core[cut.end():].strip(" ,?")
    if not first or not rest or not _clause_numeric(first) or _clause_numeric(rest):
        return None
    lead = _lead(rest)
    if not (_QWORD.match(lead) or _TEXTUAL.search(lead)):
        return None  # "…, and net income": a second amount, not a second question
    return first.rstrip("?") + "?", rest + "?"


def judges_its_number(text: str) -> bool:
    """Whether a question asks for a number and then a yes/no question of it ("What was X's margin in Q2 2023, and
    did that beat Q2 2022?"): one judgement of the number, answered with both values."""
    split = compound_parts(text)
    return split is not None and is_yes_no(split[1])


def is_comparison(core: str, n_companies: int, n_periods: int) -> bool:
    """Whether the question compares: a comparison word, two companies, or a pair of periods ("between
    FY2021 and FY2022") that is not an average over them."""
    return bool(_COMPARE.search(core)) or n_companies > 1 or (
        n_periods > 1 and bool(_PERIOD_PAIR.search(core)) and "average" not in core.lower())


def needs_calculation(core: str, text: str, metrics: Sequence[str]) -> bool:
    """Whether the answer has to be computed (a ratio, a change, a defined formula, a derived metric);
    never for a question that asks why."""
    return not _EXPLAIN.search(core) and bool(
        _CALC.search(core) or _DEFINITION.search(text) or _DERIVED.intersection(metrics))


@dataclass(frozen=True)
class RevisionWords:
    """``resources/reader/revisions.toml`` read once: the question's words that ask a revision's size (``asks``,
    ``verbs``, ``frame``), and the filing's: the verbs of revising, the marks of an earlier figure (``previous``, at
    the end of the text before it), and of an instrument ended or begun (``ended``, ``began``, ``instrument_end``)."""

    asks: re.Pattern[str]
    verbs: re.Pattern[str]
    frame: re.Pattern[str]
    previous: re.Pattern[str]
    ended: re.Pattern[str]
    began: re.Pattern[str]
    instrument_end: re.Pattern[str]


@lru_cache(maxsize=1)
def revision_words() -> RevisionWords:
    data = tomllib.loads((RESOURCES_DIR / "reader" / "revisions.toml").read_text(encoding="utf-8"))

    def words(forms: list[str]) -> re.Pattern[str]:
        body = "|".join(f.replace(" ", r"\s+") for f in sorted(forms, key=len, reverse=True))
        return re.compile(rf"\b(?:{body})\b", re.IGNORECASE)

    previous = "|".join(f.replace(" ", r"\s+") for f in sorted(data["previous"], key=len, reverse=True))
    return RevisionWords(words(data["asks"]), words(data["verbs"]), words(data["frame"] + data["verbs"]),
                         re.compile(rf"[(,;]?\s*\b(?:{previous})\b\s*:?\s*$", re.IGNORECASE),
                         words(data["ended"]), words(data["began"]),
                         re.compile("|".join(data["instrument_end"]), re.IGNORECASE))


def revision_asked(text: str) -> str:
    """What a question asks the size of a revision of ("by how many points did X raise its EPS growth guidance":
    "did X its EPS growth", its revising words left out; ``resources/reader/revisions.toml``), or "" when it asks
    none. The answer compares these words with those of the revisions a filing prints (engine.answer.revisions)."""
    w = revision_words()
    if w.asks.search(text) is None or w.verbs.search(text) is None:
        return ""
    return " ".join(w.frame.sub(" ", text).split())



@dataclass(frozen=True)
class IfAnyWords:
    """``resources/reader/if_any.toml`` read once: the words that ask whether there was any of something
    (``asks``), and the groups of words that name the same thing (``same``: word starts)."""

    asks: re.Pattern[str]
    same: tuple[tuple[str, ...], ...]
    ongoing: re.Pattern[str]  # words that ask for what still stands in the period, whenever it began
    material: re.Pattern[str]  # words that ask whether it matters ("materially important")
    immaterial: re.Pattern[str]  # the filing's words that say it does not ("will not have a material … effect")


@lru_cache(maxsize=1)
def if_any_vocab() -> IfAnyWords:
    data = tomllib.loads((RESOURCES_DIR / "reader" / "if_any.toml").read_text(encoding="utf-8"))
    forms = "|".join(f.replace(" ", r"\s+") for f in sorted(data["forms"], key=len, reverse=True))
    ongoing = "|".join(f.replace(" ", r"\s+") for f in sorted(data["ongoing"], key=len, reverse=True))
    material = "|".join(f.replace(" ", r"\s+") for f in sorted(data["material"], key=len, reverse=True))
    immaterial = "|".join(f.replace(" ", r"\s+") for f in data["immaterial"])
    return IfAnyWords(re.compile(rf"\b(?:{forms})\b", re.IGNORECASE), tuple(tuple(g) for g in data["same"]),
                      re.compile(rf"\b(?:{ongoing})\b", re.IGNORECASE), re.compile(rf"\b(?:{material})\b", re.IGNORECASE),
                      re.compile(rf"\b(?:{immaterial})\b", re.IGNORECASE))


_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]+")


def asked_if_any(text: str) -> tuple[str, ...]:
    """What a question asks whether there was any of, in its own words (("acquisitions", "divestitures") for "Were
    there any acquisitions or divestitures"; ``resources/reader/if_any.toml``): its words that name a subject
    (sections.toml [asks.words], not those that only say where to look); () when it asks no such thing or names it
    with none of them. A written answer rests on the sentences that name it (engine.answer.quotes)."""
    if not if_any_vocab().asks.search(text):
        return ()
    subject = section_vocab().subject_words(text)
    asked = section_vocab().without_place_words(text)
    return tuple(dict.fromkeys(w.lower() for w in _WORD.findall(asked) if any(rx.match(w) for rx in subject)))
