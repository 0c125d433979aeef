"""Filing identity from the file name (LOFin layout) and the cover page.

The file name is trusted for the period label when it follows LOFin's ``<ISSUER>_<PERIOD>_<FORM>``
pattern (that label is what analysts and benchmarks use); the cover page supplies the exact registrant
name, the ticker and the fiscal period end date, and fills whatever the file name lacks.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

from engine.records import FilingIdentity

_FORMS = {"10K": "10-K", "10Q": "10-Q", "8K": "8-K", "EARNINGS": "EARNINGS", "10-K": "10-K", "10-Q": "10-Q", "8-K": "8-K"}
_NAME_RE = re.compile(
    r"^(?P<issuer>.+?)_(?P<period>\d{4}(?:Q[1-4])?|\d{4}-\d{2}-\d{2})_(?P<form>10-?K|10-?Q|8-?K|EARNINGS)(?:_.*)?$", re.I
)
_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
_DATE_RE = re.compile(rf"({_MONTHS})\s+(\d{{1,2}}),?\s+(\d{{4}})", re.I)
_PERIOD_END_RE = re.compile(
    rf"for\s+the\s+(fiscal\s+year|quarterly\s+period|year|period)\s+ended\s*:?\s*(({_MONTHS})\s+\d{{1,2}},?\s+\d{{4}})", re.I
)
_REPORT_DATE_RE = re.compile(rf"date\s+of\s+report[^\n]*?(({_MONTHS})\s+\d{{1,2}},?\s+\d{{4}})", re.I)
_FORM_RE = re.compile(r"\bFORM\s+(10-K|10-Q|8-K)\b", re.I)
_TICKER_RE = re.compile(r"(?:^|  )([A-Z]{1,5}(?:\.[A-Z])?)(?:  |$)")
_EXACT_NAME_RE = re.compile(r"exact\s+name\s+of\s+(the\s+)?registrant", re.I)


def parse_file_name(path: Path) -> FilingIdentity:
    """Identity from a LOFin-style name like ``3M_2018_10K.pdf``; other names give just the doc name."""
    stem = path.stem
    m = _NAME_RE.match(stem)
    issuer_dir = path.parent.parent.name if path.parent.name.upper().replace("-", "") in {"10K", "10Q", "8K", "EARNINGS"} else None
    if not m:
        return FilingIdentity(doc_name=stem, issuer_key=issuer_dir)
    period = m.group("period").upper()
    form = _FORMS[m.group("form").upper().replace("-", "")]
    return FilingIdentity(
        doc_name=stem,
        issuer_key=(issuer_dir or m.group("issuer")).upper(),
        form=form,
        period=period,
        fiscal_year=int(period[:4]),
    )


def _iso(date_text: str) -> str | None:
    m = _DATE_RE.search(date_text)
    if not m:
        return None
    try:
        return datetime.strptime(f"{m.group(1)} {m.group(2)} {m.group(3)}", "%B %d %Y").date().isoformat()
    except ValueError:
        return None


def parse_cover(text: str) -> dict[str, str | None]:
    """Registrant, form, period end and ticker from the first page(s) of a filing."""
    head = text[:6000]
    out: dict[str, str | None] = {"registrant": None, "form": None, "period_end": None, "ticker": None}
    if m := _FORM_RE.search(head):
        out["form"] = m.group(1).upper()
    if m := _PERIOD_END_RE.search(head):
        out["period_end"] = _iso(m.group(2))
    elif m := _REPORT_DATE_RE.search(head):
        out["period_end"] = _iso(m.group(1))
    lines = [ln.strip() for ln in head.splitlines()]
    for i, line in enumerate(lines):
        if _EXACT_NAME_RE.search(line):
            # The name sits on the line above the caption (or before it on the same line).
            before = _EXACT_NAME_RE.split(line)[0].strip(" (")
            cand = before or next((lines[j] for j in range(i - 1, max(i - 4, -1), -1) if lines[j]), "")
            out["registrant"] = _clean_name(cand)
            break
    else:
        for i, line in enumerate(lines):
            if re.search(r"commission\s+file\s+number", line, re.I):
                nxt = next((ln for ln in lines[i + 1 : i + 4] if ln and not re.search(r"\d{3}-\d", ln)), "")
                if nxt and nxt.upper() == nxt and len(nxt) < 80:
                    out["registrant"] = _clean_name(nxt)
                break
    for i, line in enumerate(lines):
        if re.search(r"trading\s+symbol", line, re.I):
            for row in lines[i : i + 8]:
                row_cells = row.replace("Trading Symbol(s)", "").replace("Trading Symbol", "")
                m = _TICKER_RE.search(row_cells)
                if m and m.group(1) not in {"NYSE", "LLC", "INC", "N/A", "NONE", "YES", "NO", "USD", "TRUE"}:
                    out["ticker"] = m.group(1)
                    break
            break
    return out


def _clean_name(name: str) -> str | None:
    name = re.sub(r"\s{2,}.*$", "", name).strip(" ,")
    if re.search(r"commission\s+file|\d{3}-\d{4,}|^\(?state\b|^form\b", name, re.I):
        return None  # the name is an image (a logo) and the line above is something else
    return name or None


def combine(file_ident: FilingIdentity, cover: dict[str, str | None]) -> FilingIdentity:
    period_end = cover.get("period_end")
    form = file_ident.form or cover.get("form")
    period = file_ident.period
    fiscal_year = file_ident.fiscal_year
    if period is None and period_end:
        fiscal_year = int(period_end[:4])
        if form == "10-Q":
            period = f"{fiscal_year}Q{(int(period_end[5:7]) - 1) // 3 + 1}"
        else:
            period = str(fiscal_year) if form != "8-K" else period_end
    return FilingIdentity(
        doc_name=file_ident.doc_name,
        issuer_key=file_ident.issuer_key or (cover.get("ticker") or None),
        registrant=cover.get("registrant"),
        ticker=cover.get("ticker"),
        form=form,
        period=period,
        period_end=period_end,
        fiscal_year=fiscal_year,
    )


def summary_text(ident: FilingIdentity) -> str:
    """The deterministic cover-page summary that document retrieval embeds (HiREC's document summary)."""
    who = ident.registrant or ident.issuer_key or ident.doc_name
    parts = [who]
    if ident.ticker:
        parts.append(f"(ticker {ident.ticker})")
    if ident.issuer_key and ident.issuer_key != ident.ticker and ident.issuer_key.upper() not in who.upper().replace(" ", ""):
        parts.append(f"[{ident.issuer_key}]")
    desc = {"10-K": "annual report on Form 10-K", "10-Q": "quarterly report on Form 10-Q", "8-K": "current report on Form 8-K",
            "EARNINGS": "earnings release"}.get(ident.form or "", ident.form or "filing")
    parts.append(desc)
    if ident.period:
        label = f"fiscal year {ident.period}" if re.fullmatch(r"\d{4}", ident.period) else f"period {ident.period}"
        parts.append(f"for {label}")
    if ident.period_end:
        parts.append(f"(period ended {ident.period_end})")
    return " ".join(parts)


_SEC_MARKERS = re.compile(r"securities\s+and\s+exchange\s+commission|\bform\s+(10-K|10-Q|8-K)\b|exact\s+name\s+of\s+registrant", re.I)


def looks_like_filing(first_pages_text: str) -> bool:
    """True when the opening pages carry an SEC cover page."""
    return bool(_SEC_MARKERS.search(first_pages_text[:20000]))
