"""Characters a reader drops from filing text before anything else reads it.

Invisible format characters change what text means without showing: a zero-width space inside "1,2<ZWSP>34" hides a
number from the statement-fact reader, a right-to-left override makes "1,234" display as "432,1" in a report,
and both let a filing carry text an analyst cannot see. SEC HTML often holds zero-width spaces (``&#8203;``) in
table cells. They are removed where the readers take text in (before any character offset is counted), so
pages, chunks, facts and exports never hold them.
"""

from __future__ import annotations

import re

# zero-width space / non-joiner / joiner, word joiner, BOM; the bidirectional marks, embeddings, overrides and
# isolates; the soft hyphen (an invisible break hint); the invisible math operators.
_INVISIBLE = re.compile("[\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")


def visible(text: str) -> str:
    """``text`` without invisible format characters."""
    return _INVISIBLE.sub("", text)
