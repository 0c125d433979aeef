"""Filing identity from the file name (LOFin layout) and the cover page.

The file name is trusted for the period label when it follows LOFin's ``<ISSUER>_<PERIOD>_<FORM>``
pattern (that label is what analysts and benchmarks use); the cover page supplies the exact registrant
name, the ticker and the fiscal period end date, and fills whatever the file name lacks.

The CIK and the fiscal-year end come from what the filing states: an iXBRL filing's ``dei`` cover tags
(:func:`dei_cover`), an EDGAR header ("CENTRAL INDEX KEY:", "FISCAL YEAR END: 1231") or a cover line
("Central Index Key: ..."); a 10-K's period end ("For the fiscal year ended December 31, 2022") is its fiscal
year's end. Printed EDGAR PDFs state no CIK on their cover: what they do carry is the filing's links into EDGAR's
archive ("https://www.sec.gov/Archives/edgar/data/66740/..." in an exhibit index), whose folder is the CIK of the
registrant that filed the linked document (:func:`linked_cik`). A 10-Q prints no fiscal-year end on its cover, but its
balance sheet compares the quarter's end with the end of the last fiscal year, as Regulation S-X (Rule 10-01(c)(1))
requires (:func:`balance_sheet_year_end`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import date, datetime
from pathlib import Path

from engine.records import FilingIdentity

_FORMS = {"10K": "10-K", "10Q": "10-Q", "8K": "8-K", "EARNINGS": "EARNINGS", "10-K": "10-K", "10-Q": "10-Q", "8-K": "8-K"}
_NAME_RE = re.compile(
    r"^(?P<issuer>.+?)_(?P<period>\d{4}(?:Q[1-4])?|\d{4}-\d{2}-\d{2})_(?P<form>10-?K|10-?Q|8-?K|EARNINGS)(?:_.*)?$", re.I
)
_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
_DATE_RE = re.compile(rf"({_MONTHS})\s+(\d{{1,2}}),?\s+(\d{{4}})", re.I)
# the date after the caption, or at the start of the next line where a column beside it ends the caption's line ("For
# the quarterly period ended  Commission file\nJune 30, 2022  number 1-5805")
_PERIOD_END_RE = re.compile(
    rf"for\s+the\s+(fiscal\s+year|quarterly\s+period|year|period)\s+ended\s*:?\s*(?:[^\n\d]{{0,40}}?\n\s*)?"
    rf"(({_MONTHS})\s+\d{{1,2}},?\s+\d{{4}})", re.I
)
# the date on the caption's line, or on the line after it ("Date of report (Date of earliest event reported):\nAugust 30,
# 2023")
_REPORT_DATE_RE = re.compile(rf"date\s+of\s+report[^\n]*?(?:\n\s*)?(({_MONTHS})\s+\d{{1,2}},?\s+\d{{4}})", re.I)
# the date printed on the line above its caption ("February 2, 2023\nDate of Report (Date of earliest event …)")
_REPORT_DATE_ABOVE_RE = re.compile(rf"(({_MONTHS})\s+\d{{1,2}},?\s+\d{{4}})[ \t]*\n\s*date\s+of\s+report", re.I)
_FORM_RE = re.compile(r"\bFORM\s+(10-K|10-Q|8-K)\b", re.I)
_TICKER_RE = re.compile(r"(?:^|  )([A-Z]{1,5}(?:\.[A-Z])?)(?:  |$)")
_EXACT_NAME_RE = re.compile(r"exact\s+name\s+of\s+(the\s+)?registrant", re.I)
# a press release's dateline: "New Brunswick, N.J. (July 20, 2023) – Johnson & Johnson (NYSE: JNJ) today …",
# "BOLINGBROOK, Ill.--(BUSINESS WIRE)-- Ulta Beauty, Inc. (NASDAQ: ULTA) today …": the issuer and its listing
_DATELINE_RE = re.compile(
    r"(?:[–—]|--|\s-\s)\s*(?P<name>[A-Z](?:(?!\s-\s|--)[\w.,&'’ -]){1,70}?)\s*\(\s*(?:NYSE(?:\s+American|\s+Arca)?|NASDAQ|Nasdaq)"
    r"(?:\s+[A-Z][a-z]+)*\s*:\s*(?P<ticker>[A-Z]{1,5}(?:\.[A-Z])?)\s*\)")
_CIK_RE = re.compile(r"(?:central\s+index\s+key|\bCIK\b)(?:\s+(?:no\.?|number|#))?\s*[:#.]?\s*(\d{1,10})\b",
                     re.IGNORECASE)
_FYE_RE = re.compile(rf"fiscal\s+year\s+end\s*:\s*(--\d{{2}}-\d{{2}}|\d{{4}}\b|(?:{_MONTHS})\.?\s+\d{{1,2}}\b)",
                     re.IGNORECASE)
_EDGAR_FOLDER = re.compile(r"sec\.gov/(?:cgi-bin/browse-edgar\?[^#]*?CIK=|Archives/edgar/data/)0*(\d{1,10})\b",
                           re.IGNORECASE)
_MONTH_NUMBER = {m.lower(): i for i, m in enumerate(_MONTHS.split("|"), start=1)}


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


def month_day(text: str) -> str | None:
    """A fiscal-year end as written ("--12-31", EDGAR's "1231", "December 31", "Dec. 31") in XBRL's
    ``--MM-DD`` form; None when it names no real day of a year."""
    text = text.strip()
    if m := re.fullmatch(r"--(\d{2})-(\d{2})|(\d{2})(\d{2})", text):
        month, day = int(m.group(1) or m.group(3)), int(m.group(2) or m.group(4))
    elif m := re.fullmatch(r"([A-Za-z]{3,9})\.?\s+(\d{1,2})", text):
        name = m.group(1).lower()
        month = next((n for full, n in _MONTH_NUMBER.items() if full.startswith(name)), 0)
        day = int(m.group(2))
    else:
        return None
    try:
        datetime(2000, month, day)  # a leap year: "--02-29" is a fiscal-year end some filers state
    except ValueError:
        return None
    return f"--{month:02d}-{day:02d}"


def normal_cik(text: str) -> str | None:
    """A CIK as EDGAR writes it, ten digits with leading zeros; None for anything else."""
    digits = text.strip()
    return digits.zfill(10) if re.fullmatch(r"\d{1,10}", digits) and int(digits) else None


# Where a filing's CIK and fiscal-year end come from (FilingIdentity.cik_source, .fiscal_year_end_source)
FROM_COVER = "printed on the cover"
FROM_TAGS = "the filing's inline XBRL cover tags"
FROM_LINKS = "the filing's links to its EDGAR folder"
FROM_PERIOD = "the fiscal year the cover says the report covers"
FROM_BALANCE_SHEET = "the balance sheet's column for the last fiscal year's end"
# what engine.ingest.runner.refresh_identity reads again: identity-2 links and 10-Q balance sheets; identity-3 also
# the stored cover's text for what the identity lacks (an 8-K's date of report printed on the line below its caption)
IDENTITY_VERSION = "identity-4"


def linked_cik(uris: Iterable[str]) -> str | None:
    """The CIK of the EDGAR folder that more than half of a filing's EDGAR links name (an exhibit index links the
    registrant's own earlier filings; a few may be a predecessor's or a parent's); None without such a majority."""
    found = Counter(normal_cik(m[1]) for uri in uris if (m := _EDGAR_FOLDER.search(uri)))
    found.pop(None, None)
    if not found:
        return None
    cik, n = found.most_common(1)[0]
    return cik if 2 * n > sum(found.values()) else None


def pdf_link_uris(path: str) -> list[str]:
    """The URIs a PDF's links point to, every page (about 15 ms for a 150-page filing)."""
    import pymupdf

    with pymupdf.open(path) as doc:
        return [uri for page in doc for link in page.get_links() if (uri := link.get("uri"))]


def balance_sheet_year_end(columns: Iterable[tuple[str, str | None, int | None]], period_end: str | None) -> str | None:
    """A 10-Q's fiscal-year end from its balance sheet: ``columns`` are (statement, period end, months) of its facts;
    the balance sheet compares the quarter's end (``period_end``, else its latest balance date) with the last fiscal
    year's end: the latest other balance date less than a year before (the same quarter a year earlier, which some
    print too, is not it). None when the balance sheet prints no such column (at least five values)."""
    counts = Counter(end for statement, end, months in columns if statement == "balance sheet" and months == 0 and end)
    dates = sorted(d for end, n in counts.items() if n >= 5 and (d := _date(end)) is not None)
    if not dates:
        return None
    quarter = _date(period_end or "") or dates[-1]
    earlier = [d for d in dates if 0 < (quarter - d).days < 350]
    return f"--{earlier[-1].month:02d}-{earlier[-1].day:02d}" if earlier else None


def _date(text: str) -> date | None:
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None


def parse_cover(text: str) -> dict[str, str | None]:
    """Registrant, form, period end, ticker, CIK and fiscal-year end from the first page(s) of a filing."""
    head = text[:6000]
    out: dict[str, str | None] = {"registrant": None, "form": None, "period_end": None, "ticker": None,
                                  "cik": None, "fiscal_year_end": None, "cik_source": None,
                                  "fiscal_year_end_source": None}
    if m := _FORM_RE.search(head):
        out["form"] = m.group(1).upper()
    if m := _CIK_RE.search(head):
        out["cik"] = normal_cik(m.group(1))
        out["cik_source"] = FROM_COVER if out["cik"] else None
    if m := _FYE_RE.search(head):
        out["fiscal_year_end"] = month_day(m.group(1))
        out["fiscal_year_end_source"] = FROM_COVER if out["fiscal_year_end"] else None
    if m := _PERIOD_END_RE.search(head):
        out["period_end"] = _iso(m.group(2))
        if out["fiscal_year_end"] is None and m.group(1).lower().split()[-1] == "year" and out["period_end"]:
            out["fiscal_year_end"] = "--" + out["period_end"][5:]  # "for the fiscal year ended December 31, 2022"
            out["fiscal_year_end_source"] = FROM_PERIOD
    elif m := _REPORT_DATE_RE.search(head) or _REPORT_DATE_ABOVE_RE.search(head):
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
    if out["registrant"] is None and (m := _DATELINE_RE.search(head)):  # an earnings release: its dateline
        out["registrant"] = _clean_name(m["name"])
        out["ticker"] = m["ticker"]
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


# iXBRL cover tags (``dei``) and the identity field each states
_DEI_FIELDS = {"dei:EntityCentralIndexKey": "cik", "dei:CurrentFiscalYearEndDate": "fiscal_year_end",
               "dei:TradingSymbol": "ticker", "dei:EntityRegistrantName": "registrant"}


def dei_cover(values: Mapping[str, str], entity_cik: str | None = None) -> dict[str, str | None]:
    """The identity an iXBRL filing's ``dei`` cover tags state (``dei:EntityCentralIndexKey``,
    ``dei:CurrentFiscalYearEndDate``, ``dei:TradingSymbol``, ``dei:EntityRegistrantName``), normalised as
    :func:`parse_cover` returns them; ``entity_cik``: the CIK its contexts' entity identifiers give, used when no
    dei tag states one."""
    out: dict[str, str | None] = dict.fromkeys(_DEI_FIELDS.values())
    for name, field_name in _DEI_FIELDS.items():
        value = " ".join(values.get(name, "").split())
        if not value:
            continue
        if field_name == "cik":
            out[field_name] = normal_cik(value)
        elif field_name == "fiscal_year_end":
            out[field_name] = month_day(value)
        else:
            out[field_name] = value
    if out["cik"] is None and entity_cik:
        out["cik"] = normal_cik(entity_cik)
    return out


def with_tagged_cover(cover: dict[str, str | None], tagged: dict[str, str | None]) -> dict[str, str | None]:
    """The cover read from the text, with what the filing's tags state: a tagged CIK or fiscal-year end is the
    filer's own statement and wins; a tagged ticker or name fills only what the text does not give."""
    out = dict(cover)
    for key, value in tagged.items():
        if value and (key in ("cik", "fiscal_year_end") or not out.get(key)):
            out[key] = value
            if key in ("cik", "fiscal_year_end"):
                out[f"{key}_source"] = FROM_TAGS
    return out


def with_linked_cik(cover: dict[str, str | None], uris: Iterable[str]) -> dict[str, str | None]:
    """The cover with the CIK of the filing's EDGAR links (:func:`linked_cik`) where it states none itself."""
    if cover.get("cik") or (cik := linked_cik(uris)) is None:
        return cover
    return {**cover, "cik": cik, "cik_source": FROM_LINKS}


def combine(file_ident: FilingIdentity, cover: dict[str, str | None]) -> FilingIdentity:
    """The identity of a filing: the file name's issuer, form and period, the cover's name, ticker, period end,
    CIK and fiscal-year end; a 10-K whose cover states no fiscal-year end ends its fiscal year on its period
    end (the rule migration m005 applies to filings stored before)."""
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
    fiscal_year_end, fye_source = cover.get("fiscal_year_end"), cover.get("fiscal_year_end_source")
    if fiscal_year_end is None and form == "10-K" and period_end:
        fiscal_year_end, fye_source = "--" + period_end[5:], FROM_PERIOD
    return FilingIdentity(
        doc_name=file_ident.doc_name,
        issuer_key=file_ident.issuer_key or (cover.get("ticker") or None),
        registrant=cover.get("registrant"),
        ticker=cover.get("ticker"),
        form=form,
        period=period,
        period_end=period_end,
        fiscal_year=fiscal_year,
        cik=cover.get("cik"),
        fiscal_year_end=fiscal_year_end,
        cik_source=(cover.get("cik_source") or FROM_COVER) if cover.get("cik") else None,
        fiscal_year_end_source=(fye_source or FROM_COVER) if fiscal_year_end else None,
    )


def with_balance_sheet_year_end(ident: FilingIdentity,
                                columns: Iterable[tuple[str, str | None, int | None]]) -> FilingIdentity:
    """A 10-Q whose cover states no fiscal-year end, with the one its balance sheet prints
    (:func:`balance_sheet_year_end`); any other filing as it is."""
    if ident.fiscal_year_end or ident.form != "10-Q" or not (found := balance_sheet_year_end(columns, ident.period_end)):
        return ident
    return replace(ident, fiscal_year_end=found, fiscal_year_end_source=FROM_BALANCE_SHEET)


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
