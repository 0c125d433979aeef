"""The one reader of printed numbers and scales.

Filings and answers write a figure in a few shapes; each pattern here names one, and every reader in
the engine imports it from here:

- :data:`NUMERAL`: the digits of a figure, with thousands separators and decimals ("1,577", "2019.5").
- :data:`NUMBER`: a figure as printed in running text or a table: an accounting negative, a sign, a
  dollar sign ("(1,577)", "-3", "$ 2,019.5"). :func:`parse_number` reads its value; :func:`numbers_in`
  every value in a text.
- :data:`CELL`: a value cell of a statement row: a figure, a percentage, or a dash for nil ("(1,577)",
  "12.3%", "—"). :func:`is_number_cell` says whether a whole cell is a figure (what makes a line a row).
- :data:`MENTION`: a number as prose and answers write it, with a currency, a scale word or letter and a
  percent ("$1.2 billion", "US$ 5bn", "(3.4)%", "5 percent"); the answer matcher
  (:mod:`engine.eval.metrics`) reads it with its named groups.

Scales: a table prints its amounts "in millions" (:func:`printed_scale` anywhere in a passage,
:func:`scale_caption` for a row label that opens with one, :func:`caption_of` for a caption's scales of amounts
and of share counts apart: "(In thousands, except share data)"); an answer writes "billion", "bn" or "m"
(:func:`scale_word`). :data:`SCALE_FACTORS` and :data:`SCALE_EXPONENTS` convert between them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "CELL", "MENTION", "NUMBER", "NUMERAL", "SCALE_ABBREVIATIONS", "SCALE_EXPONENTS", "SCALE_FACTORS", "Caption",
    "caption_of", "is_number_cell", "numbers_in", "numerals_in", "parse_number", "printed_scale", "printed_scales",
    "scale_caption", "scale_word", "strip_scale",
]

# ------------------------------------------------------------------------------------------------ figures
NUMERAL = re.compile(r"\d[\d,]*(?:\.\d+)?")
NUMBER = re.compile(rf"\(?-?\$?\s?{NUMERAL.pattern}\)?")
CELL = re.compile(rf"(?:\(\$?)?-?{NUMERAL.pattern}\)?%?|[—–]")  # "($4,935)": a dollar sign inside the parentheses
# Looser than CELL, as chunking always read it: "$(1,577)" and ".50" also make a line a table row.
_NUMBER_CELL = re.compile(r"\(?-?\$?\(?[\d,]*\.?\d+\)?%?")


def parse_number(token: str, *, dash: float | None = None) -> float | None:
    """The value of one printed figure (a :data:`NUMBER` or :data:`CELL` token), or None.

    A token wrapped in parentheses is an accounting negative ("(1,577)" -> -1577.0); ``$``, ``%``, spaces
    and thousands separators are dropped ("$ 2,019.5" -> 2019.5, "12.3%" -> 12.3). A token without
    digits, such as a dash printed for nil, gives ``dash`` (None unless the caller reads "—" as 0).

    Args:
        token: The figure as printed.
        dash: The value of a lone dash ("—", "–", "-").
    """
    stripped = token.strip()
    if dash is not None and stripped in ("—", "–", "-"):
        return dash
    # (a unit printed outside the parentheses keeps them a negative: "(6.4)%", "$(12)", "(0.5) pts")
    core = re.sub(r"^[\s$€£]*|(?:\s*(?:%|pts?\.?|bps|x))*\s*$", "", stripped)
    negative = core.startswith("(") and core.endswith(")")
    try:
        value = float(re.sub(r"[^\d.\-]", "", token))
    except ValueError:
        return None
    return -abs(value) if negative else value


def numbers_in(text: str) -> set[float]:
    """The value of every figure (:data:`NUMBER`) printed in ``text``, years and note numbers included."""
    return {v for token in NUMBER.findall(text) if (v := parse_number(token)) is not None}


def numerals_in(text: str) -> set[str]:
    """Every numeral in ``text`` as written, less its thousands separators ("$1,577.0" -> "1577.0").

    Strings, not floats: a figure is compared as printed, so "1577" and "1577.0" stay apart.
    """
    return {n.replace(",", "") for n in NUMERAL.findall(text)}


def is_number_cell(cell: str) -> bool:
    """Whether one whole cell (spaces removed) is a printed figure: "(1,577)", "$(12)", ".50", "12.3%"."""
    return _NUMBER_CELL.fullmatch(cell) is not None


# ------------------------------------------------------------------------------------------------ mentions
MENTION = re.compile(
    r"""(?<![\w.])(?<!\d,)(?<![A-Za-z]-)
    (?P<cur0>(?:US)?\$\s*)?(?P<open>\(\s*)?(?P<sign>[-−+]\s*)?
    (?P<cur>(?:US)?\$\s*|USD\s*)?(?P<sign2>[-−]\s*)?
    (?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)
    (?:\s*(?P<word>thousand|million|billion|trillion)s?\b|\s?(?P<abbr>mm|mn|bn|tn)\b|(?P<letter>[kmbt])\b)?
    (?P<tail>\s*(?:USD|\$))?(?P<pct>\s*(?:%|per\s?cent\b|percentage\s+points?\b))?
    (?P<close>\s*\))?(?P<pct2>\s*%)?(?!\w)(?!-[A-Za-z])""",
    re.VERBOSE | re.IGNORECASE,
)
"""A number in prose or an answer. Groups: ``num`` (the digits), ``open``/``close`` (parentheses),
``sign``/``sign2``, ``cur0``/``cur``/``tail`` (currency marks), ``word``/``abbr``/``letter`` (scale), ``pct``/
``pct2`` (percent). Identifiers glued to letters ("FY2022", "Q2", "10-K", "COVID-19") are not numbers."""

# ------------------------------------------------------------------------------------------------ scales
SCALE_EXPONENTS = {"thousand": 3, "million": 6, "billion": 9, "trillion": 12}
# Keyed as tables print their scale and as unit hints name it ("USD millions").
SCALE_FACTORS = {f"{word}s": 10.0**exp for word, exp in SCALE_EXPONENTS.items()}
SCALE_ABBREVIATIONS = {"k": "thousand", "m": "million", "mm": "million", "mn": "million", "b": "billion",
                       "bn": "billion", "t": "trillion", "tn": "trillion"}  # fmt: skip

_PRINTED = "thousands|millions|billions"
# "(000's)", "($000)", "(in 000s)", "(000 omitted)": thousands written as the zeros left out
_ZEROS = r"\(\s*(?:in\s+)?\$?\s*000['’]?s?(?:\s+omitted)?\s*\)|\bin\s+\$?000['’]?s\b"
_PRINTED_SCALE = re.compile(rf"\(\s*(?:\$|usd|dollars)?\s*(?:amounts\s+)?(?:in\s+)?({_PRINTED})\b|"
                            rf"\b(?:\$|dollars|amounts)?\s*in\s+({_PRINTED})\b|({_ZEROS})", re.IGNORECASE)
# a caption's own clause for share counts: "shares in thousands", "number of shares, which are reflected in thousands"
_SHARE_SCALE = re.compile(rf"\bshares?\b(?:\s+(?:data|amounts|counts?|outstanding))?[,\s]+(?:which\s+)?"
                          rf"(?:(?:are|is)\s+)?(?:(?:reflected|stated|presented|shown)\s+)?in\s+({_PRINTED})\b",
                          re.IGNORECASE)
# an exception for share counts ("except share data", "except per share and share amounts", "except number of
# shares"); "except per share data" excepts per-share amounts only
_SHARES_EXCEPTED = re.compile(r"\bexcept\b[^)]*?(?<!per )(?<!per-)\bshares?\b(?!\s+prices?)", re.IGNORECASE)
_CAPTION_END = re.compile(r"[)\n]")
_SCALE_CAPTION = re.compile(rf"\(?(?:in|dollars in|amounts in|\$ in)\s+({_PRINTED})", re.IGNORECASE)


def printed_scale(text: str) -> str | None:
    """The scale a passage prints its amounts in (the first it prints), or None.

    "(Millions)" -> "millions"; "(In thousands, except per share amounts)" -> "thousands"; a figure in
    prose ("grew to $3.1 billion") is not a scale the passage prints in.
    """
    m = _scale_match(text, last=False)
    return _scale_of(m) if m else None


def strip_scale(text: str) -> str:
    """``text`` without the scales it prints ("Shares (000's)" -> "Shares ")."""
    return _PRINTED_SCALE.sub("", text)


def printed_scales(text: str) -> list[str]:
    """Every scale ``text`` prints, in order ("(In millions)" ... "(000's)" -> ["millions", "thousands"])."""
    return [_scale_of(m) for m in _PRINTED_SCALE.finditer(text)]


def _scale_match(text: str, *, last: bool) -> re.Match[str] | None:
    found = list(_PRINTED_SCALE.finditer(text)) if last else [m for m in [_PRINTED_SCALE.search(text)] if m]
    return found[-1] if found else None


def _scale_of(m: re.Match[str]) -> str:
    return "thousands" if m.group(3) else (m.group(1) or m.group(2)).lower()


@dataclass(frozen=True)
class Caption:
    """What a table's scale caption says of its rows: the scale of its money ``amounts`` and of its ``shares``
    (counts of shares; None: printed in full). Per-share amounts are never scaled.

    "(In millions, except per share data)": amounts and shares in millions (the exception is per-share amounts
    only); "(In thousands, except share and per share data)": shares printed in full; "(In millions, except
    number of shares, which are reflected in thousands)": shares in thousands; "(000's)": thousands.
    """

    amounts: str | None
    shares: str | None


def caption_of(text: str, *, last: bool = False) -> Caption | None:
    """The :class:`Caption` printed in ``text`` (its first, or its ``last``), or None when it prints no scale.
    The caption's clause runs from its scale to the closing parenthesis or the end of its line."""
    m = _scale_match(text, last=last)
    if m is None:
        return None
    amounts = _scale_of(m)
    end = _CAPTION_END.search(text, m.end())
    clause = text[m.start(): end.start() if end else len(text)]
    own = _SHARE_SCALE.search(clause)
    if own:
        return Caption(amounts, own.group(1).lower())
    return Caption(amounts, None if _SHARES_EXCEPTED.search(clause) else amounts)


def scale_caption(label: str) -> str | None:
    """The scale when a row label opens with a scale caption ("(In millions", "Dollars in thousands"), else None."""
    m = _SCALE_CAPTION.match(label)
    return m.group(1).lower() if m else None


def scale_word(word: str | None) -> str | None:
    """A scale word or abbreviation as the singular word: "Billions", "bn", "B" -> "billion"; else None."""
    w = (word or "").lower()
    if w in SCALE_ABBREVIATIONS:
        return SCALE_ABBREVIATIONS[w]
    w = w.removesuffix("s")
    return w if w in SCALE_EXPONENTS else None
