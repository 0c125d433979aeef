"""Text as people read it: counts ("1 page", "2 pages", "1 input"; every label, status line and summary uses
them), a value as an answer states it, and an answer's lead sentence (the headline an answer card shows above
the rest)."""

from __future__ import annotations

import re


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and the noun in the number it takes: the noun as given for one, ``plural`` (default: noun + "s")
    otherwise. Thousands are grouped ("1,204 pages")."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def format_value(value: float, unit: str | None, decimals: int | None) -> str:
    """A computed value as the answer states it: "22.41%", "1,577 USD millions", "3.27"; ``decimals`` as the
    question asks, else two (four below 1; none for a whole number)."""
    if unit == "percent":
        return f"{value:.{2 if decimals is None else decimals}f}%"
    if unit == "percentage points":  # (a rate less another: two places, as a percentage's)
        return f"{value:.{2 if decimals is None else decimals}f} percentage points"
    if decimals is not None:
        body = f"{value:,.{decimals}f}"
    elif float(value).is_integer():
        body = f"{value:,.0f}"
    else:
        body = f"{value:,.2f}" if abs(value) >= 1 else f"{value:.4f}"
    return f"{body} {unit}" if unit else body


# what may start a sentence after a full stop: a capital, a digit, a sign, a quote or a bracket
_NEXT_SENTENCE = re.compile(r"\s+(?=[A-Z0-9\"“'‘(\[$+\-−])")


def lead_sentence(text: str) -> tuple[str, str]:
    """(the first sentence, the rest) of an answer: split at the first ". ", "? " or "! " outside brackets that
    ends a word of its own — not an initial or a short capitalised abbreviation after a word ("Inc.", "Co.",
    "U.S.", "p."; a bracket or a percent sign before it ends one) — and is followed by what can start a sentence; or at the first line break outside brackets (a
    heading line, then its lines: "Effective tax rate, quarter by quarter:" and one line a quarter).
    ``(text, "")`` when it is one sentence."""
    depth = 0
    for i, ch in enumerate(text):
        if ch == "\n" and depth == 0 and text[:i].strip():
            return text[:i].strip(), text[i + 1:].strip()
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth = max(0, depth - 1)
        elif ch in ".?!" and depth == 0 and (m := _NEXT_SENTENCE.match(text, i + 1)):
            word = re.search(r"[\w.]*$", text[:i])
            w = word.group() if word else ""
            after_a_word = bool(text[: i - len(w)].strip())  # "Yes." alone is a sentence; "Apple Inc." is not one
            # a bracket, a percent sign or a quote before the stop ends the sentence ("(+2.5%). The others")
            if ch == "." and w and ((len(w) == 1 and w.isalpha()) or "." in w
                                    or (after_a_word and len(w) <= 4 and w[:1].isupper())):
                continue
            return text[: i + 1].strip(), text[m.end():].strip()
    return text.strip(), ""
