"""The filing forms a question points at.

Forms are a soft hint: explicit 10-K/10-Q/8-K, "annual report" -> 10-K, a stated Q1-Q3 or "quarterly"
-> 10-Q (Q4 alone implies none, being reported in the 10-K), "earnings/press release" -> "EARNINGS"
(the corpus' form label).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_FORM_CUES = (("10-K", r"\b10-?Ks?\b|\bannual\s+reports?\b"), ("10-Q", r"\b10-?Qs?\b|\bquarterly\b"),
              ("8-K", r"\b8-?Ks?\b"), ("EARNINGS", r"\b(?:earnings|press)\s+(?:releases?|announcements?)\b"))


def form_hints(text: str, stated_quarters: Sequence[int]) -> tuple[str, ...]:
    """Forms in order of mention; the 10-Q a stated Q1-Q3 (or "quarter") implies comes last."""
    forms = [(m.start(), f) for f, p in _FORM_CUES for m in re.finditer(p, text, re.IGNORECASE)]
    if any(q < 4 for q in stated_quarters) or (
            not stated_quarters and re.search(r"\bquarters?\b", text, re.IGNORECASE)):
        forms.append((len(text), "10-Q"))
    return tuple(dict.fromkeys(f for _, f in sorted(forms)))
