"""Statement facts from a filing's page texts: every table row × period column as a typed :class:`StatementFact`.

Ingest writes table rows with their cells apart (two spaces or dot leaders, see :mod:`engine.ingest.pdf`),
so a table is read from the page text the library already stores:

- a **column header** is a short line of years or dates ("(Millions)  2018  2017  2016", "Fiscal Years Ended
  February 2, 2019  February 3, 2018"); the lines between it and the table above (title, "Year Ended December
  31,", "Three Months Ended  Nine Months Ended", one month and day per column) say what the columns measure.
  Comparison columns ("2022 vs. 2021") after the periods are left out;
- each column becomes a :class:`ColumnPeriod`: its fiscal year, its end date when one is printed, and its
  duration in months (3, 6, 9, 12) or 0 for an instant (a balance sheet date); an annual report's titled flow
  statements cover fiscal years. A column whose duration the headers do not state keeps ``months=None``, and
  periods printed twice take the column groups printed over them ("Pension | Other benefits") or stay alike:
  either way their facts are low confidence, never a guessed period;
- each **row** with exactly as many value cells as the header has columns gives one fact per cell; a row
  with another count gives none (its cells cannot be matched to periods). A row of values only, right after
  rows, is their unlabeled total; a label broken over two lines is joined;
- a line without values above rows is their **parent** heading ("Current assets:" › "Inventories"), closed by
  its total; a row whose label opens with "Total" (or "Net cash provided/used") is marked a total;
- the **unit** (USD, USD/share, shares, count, %, ratio, years) comes from the row's label, then its headings;
- the **scale** comes from the table's printed caption ("(In millions, except per share data)", above or just
  under the years), read as a :class:`~engine.vocab.numbers.Caption`: amounts and share counts apart ("except share
  data", "shares in thousands"), or from a caption in the row's own label or heading ("Shares (000's)"). Money in a
  table that prints none takes the scale the filing prints most; counts do not; per-share amounts, percentages,
  ratios and years are never scaled;
- a table goes on over a page break: the next page's rows before any header take its columns (high confidence
  only under a "(continued)" mark).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace

from engine.chunking import CELL_GAP, VALUES_ONLY, parse_row
from engine.records import ColumnPeriod, StatementFact
from engine.vocab.numbers import (
    CELL,
    Caption,
    caption_of,
    parse_number,
    printed_scale,
    printed_scales,
    scale_caption,
    strip_scale,
)

_YEAR = re.compile(r"(?<!\d)(?:19|20)\d\d(?!\d)")
YEAR = _YEAR  # a four-digit year (engine.facts.figures reads header years and skips years with it)
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_MONTH = rf"(?:{'|'.join(m[:3] + '(?:' + m[3:] + ')?' for m in _MONTHS)})\.?"
# one space between the day and the year: a cell gap ends a date ("December 31,  2018  2017" is no date)
_DATE = re.compile(rf"\b({_MONTH}) (\d{{1,2}}),? ((?:19|20)\d\d)\b", re.IGNORECASE)
_MONTH_DAY = re.compile(rf"\b({_MONTH})\s+(\d{{1,2}})\b", re.IGNORECASE)
_DURATION = re.compile(
    r"\b(three|six|nine|twelve|3|6|9|12)[\s-]+months?\b|\b(13|26|39|52|53)[\s-]+weeks?\b|"
    r"\b(?:fiscal\s+)?(years?)\s+ended\b|\b(?:fiscal\s+)?(year)\b|\b(quarter)s?\s+ended\b|"
    r"\b(?:first|second|third|fourth)\s+(quarter)\b",  # a release's "SECOND QUARTER" over its columns
    re.IGNORECASE)
_WORD_MONTHS = {"three": 3, "six": 6, "nine": 9, "twelve": 12, "3": 3, "6": 6, "9": 9, "12": 12}
_WEEK_MONTHS = {"13": 3, "26": 6, "39": 9, "52": 12, "53": 12}
_INSTANT = re.compile(r"\bas\s+of\b|\bat\b|\bbalance\s+sheets?\b|\bfinancial\s+(?:position|condition)\b",
                      re.IGNORECASE)
# words a column-header line may carry besides its years and dates
_HEADER_WORDS = re.compile(
    rf"{_MONTH}|\b(?:fiscal|years?|ended|ending|months?|weeks?|quarters?|three|six|nine|twelve|as|of|at|"
    r"in|millions?|thousands?|billions?|except|per|share|amounts?|data|usd|dollars|unaudited|restated|"
    r"and|the|total|period|\d{1,2})\b|[$()%,.*\-–—]",
    re.IGNORECASE)
_STATEMENTS = (
    ("balance sheet", re.compile(r"balance\s+sheets?|financial\s+(?:position|condition)", re.IGNORECASE)),
    ("cash flows", re.compile(r"statements?\s+of\s+(?:consolidated\s+)?cash\s*flows?|cash\s*flows?\s+statements?",
                              re.IGNORECASE)),
    ("equity", re.compile(r"(?:stock|share)holders['’]?\s+(?:equity|deficit)|changes\s+in\s+equity",
                          re.IGNORECASE)),
    ("income statement", re.compile(r"statements?\s+of\s+(?:consolidated\s+)?(?:operations|income|earnings|"
                                    r"comprehensive\s+(?:income|loss))|income\s+statements?", re.IGNORECASE)),
)
_TOTAL = re.compile(r"^(?:total\b|net\s+cash\s+(?:provided|used|from)|net\s+(?:increase|decrease))", re.IGNORECASE)
_PER_SHARE = re.compile(r"per\s+(?:common\s+|diluted\s+|basic\s+)?share|\beps\b", re.IGNORECASE)
_AMOUNTS_ASIDE = re.compile(r"\([^()]*\d[^()]*\)")  # "($2.585, $2.535 per share)", "($0.01 par value)"
_PERCENT = re.compile(r"\bpercent(?:age)?\b|\(%\)|(?<!exchange )\brates?\b(?!\s+(?:swaps?|contracts?|locks?))",
                      re.IGNORECASE)
_PERCENT_TABLE = re.compile(r"\b(?:as\s+a\s+)?percent(?:age)?\s+of\s+(?:net\s+|total\s+)?(?:revenues?|sales)\b",
                            re.IGNORECASE)
_RATIO = re.compile(r"\bratio\b|\bcoverage\b|\btimes\b|\(x\)", re.IGNORECASE)
_YEARS = re.compile(r"\(\s*(?:in\s+)?years\s*\)|\bin\s+years\b", re.IGNORECASE)
# a count of shares ("Weighted-average shares", "Shares outstanding"), not money spent on shares ("Repurchase of
# shares", "Acquisition of MGM China shares")
_SHARES = re.compile(r"\b(?:weighted[- ]average|average|number\s+of|basic|diluted)\b[^$]*?\bshares\b|"
                     r"\bshares\s+(?:used|outstanding|issued|authorized|of\s+common\s+stock\s+outstanding)\b|"
                     r"^shares\b|\(in\s+shares\)|\bshare\s+count\b", re.IGNORECASE)
# a count of things that are not money or shares ("Number of stores", "Paid memberships at end of period")
_COUNT = re.compile(r"^number\s+of\b|^(?:paid|total|ending|average|monthly\s+active)\s+(?:memberships|members|"
                    r"subscribers|users)\b|^(?:subscribers|employees)\b|\bheadcount\b|\b(?:MAUs|DAUs)\b",
                    re.IGNORECASE)
_MONEY = re.compile(r"\$|\b(?:revenues?|fees?|sales|costs?|expenses?|income|cash|amounts?|price|value|balances?)\b",
                    re.IGNORECASE)
_HEADER_BLOCK = 6  # lines above a column header searched for its title and period words


@dataclass(frozen=True)
class _Table:
    title: str
    statement: str
    columns: tuple[ColumnPeriod, ...]
    caption: Caption  # the scales of its amounts and share counts
    own_scale: bool  # the table prints its scale (else ``caption`` holds the filing's usual one)
    continued: bool = True  # False: carried over from the previous page without a "continued" mark
    compared: bool = False  # comparison columns ("2022 vs. 2021") follow the period columns
    distinct: bool = True  # False: two columns print the same period and no column group tells them apart
    percent: bool = False  # the table prints percentages without % signs ("… as a percentage of revenue")
    # the positions of the periods' amounts among a row's cells, where each period prints more than its amount
    # ("Amount  to Sales  Amount  to Sales  (Decrease)" under "2023  2022  Percent": cells 0 and 2); () for all
    picks: tuple[int, ...] = ()
    picks_of: int = 0  # how many cells the line naming them prints (a label column's caption among them)


def _month_number(name: str) -> int:
    return next(i for i, m in enumerate(_MONTHS, start=1) if name.lower().rstrip(".").startswith(m[:3]))


def fiscal_year_of(year: int, month: int | None, day: int | None) -> int:
    """The fiscal year a period ending on the date is named for: its year, except a 52/53-week year ending in
    the first week of January, which belongs to the year before (as retailers name it)."""
    return year - 1 if month == 1 and day is not None and day <= 7 else year


def is_column_header(line: str) -> bool:
    """A column-header line: years (or dates) and header words only, nothing like a sentence."""
    if not _YEAR.search(line) or len(line) > 160 or line.rstrip().endswith(".") and not _YEAR.search(line[-6:]):
        return False
    if parse_row(line) is not None:
        return False
    rest = _YEAR.sub(" ", _COMPARISON.sub(" ", _CAPTION.sub(" ", line)))
    if re.search(r"\d{3,}|\d,\d|\s{2,}[($]?\d", rest):
        # an amount besides the years ("Shares outstanding - 2018: 576,575,168"), or value cells after them (the
        # end of a broken label: "2021, 2020 and 2019, respectively  (1)  9  15"): a row
        return False
    return len(re.findall(r"[A-Za-z]{2,}", _HEADER_WORDS.sub(" ", rest))) <= 2


def _durations(context: str, n: int) -> list[int | None]:
    """Each column's duration in months (0: an instant), from the header lines; None when not stated."""
    spans: list[int] = []
    for m in _DURATION.finditer(context):
        if m[1]:
            spans.append(_WORD_MONTHS[m[1].lower()])
        elif m[2]:
            spans.append(_WEEK_MONTHS[m[2]])
        elif m[3] or m[4]:
            spans.append(12)
        elif m[5] or m[6]:
            spans.append(3)
    if spans:
        if n % len(spans) == 0:  # "Three Months Ended  Nine Months Ended" over four columns: two each
            per = n // len(spans)
            return [s for s in spans for _ in range(per)]
        return [None] * n
    if _INSTANT.search(context):
        return [0] * n
    return [None] * n


# "2022 vs. 2021": a column of changes between two periods, printed after the periods' own columns
_COMPARISON = re.compile(r"(?:19|20)\d\d\s+(?:vs\.?|versus|compared\s+(?:with|to))\s+(?:19|20)\d\d", re.IGNORECASE)
_CAPTION = re.compile(r"\([^()]*\)")  # "(Millions, except percentages and where indicated)"
_FLOW_STATEMENTS = {"income statement", "cash flows", "equity"}
# Columns that are not one period each: "2019-2020", "Thereafter", "Total", "Less than 1 year" (a maturity or
# contractual-obligations table). Their years cannot be matched to cells one to one.
_NOT_PERIODS = re.compile(r"(?:19|20)\d\d\s*[-–—]\s*(?:19|20)?\d\d\b|\bthereafter\b|\btotal\b|\bless\s+than\b|"
                          r"\bmore\s+than\b|\byears?\s+\d", re.IGNORECASE)


def _columns(header: str, context: str, statement: str, form: str,
             above: list[str]) -> tuple[tuple[ColumnPeriod, ...], bool]:
    """The header's period columns (comparison columns left out), and whether each column is told apart from the
    others. ``form``: the filing's form as :func:`_form` writes it; an annual report's titled flow statement whose
    headers state no duration covers fiscal years. Periods printed more than once ("Pension 2018 2017 | Other
    benefits 2018 2017") take the column groups printed above them (``above``: the lines over the header, nearest
    last); columns still alike cannot be told apart."""
    header = _COMPARISON.sub(" ", header)
    cells: list[tuple[str, int | None, int | None, int]] = [
        (m[0], _month_number(m[1]), int(m[2]), int(m[3])) for m in _DATE.finditer(header)]
    if not cells:
        years = _YEAR.findall(header)
        # "July 29,  January 28,  July 30," over "2023  2023  2022": one month and day per column (a line of whole
        # dates, "At January 1, 2023 and January 2, 2022", is no such line); else the one printed above the years
        # ("Year Ended December 31,") for all of them
        per_column = next((found for line in reversed(above[-2:])
                           if len(found := _MONTH_DAY.findall(line)) == len(years) > 1 and not _DATE.search(line)),
                          None)
        # a month and day without a year ("Year Ended December 31,") before a whole date of the prose above
        # ("... as of January 1, 2020.")
        prose = " ".join(above[-3:])  # the lines over the header, without its years (read as dates after "31,")
        found = list(_MONTH_DAY.finditer(prose))
        md = next((m for m in found if not _DATE.match(prose, m.start())), None) or (
            found[0] if found else _MONTH_DAY.search(context))
        days = [(_month_number(m), int(d)) for m, d in per_column] if per_column else (
            [(_month_number(md[1]), int(md[2]))] * len(years) if md else [(None, None)] * len(years))
        # A bare year names a fiscal year: "2022" over a balance sheet "At January 1, 2023 and January 2, 2022"
        # is fiscal 2022, which ended on January 1, 2023. The context's dates serve when they name the same fiscal
        # years in the same order; else a month and day from the context end the named year (in the next calendar
        # year for a 52/53-week year ending in January's first week, as fiscal_year_of reads it).
        dated = [(_month_number(m[1]), int(m[2]), int(m[3])) for m in _DATE.finditer(prose)]
        if not per_column and len(dated) == len(years) and all(
                fiscal_year_of(dy, dm, dd) == int(y) for y, (dm, dd, dy) in zip(years, dated)):
            cells = [(y, dm, dd, dy) for y, (dm, dd, dy) in zip(years, dated)]
        else:  # a month and day printed over each year ("July 29," over "2023") complete a calendar date
            cells = [(y, month, day, int(y) + (not per_column and month == 1 and day is not None and day <= 7))
                     for y, (month, day) in zip(years, days)]
    if _NOT_PERIODS.search(header):
        durations: list[int | None] = [None] * len(cells)
    else:
        # the duration words of the header lines themselves first; a sentence above ("for the three and six months
        # ending March 31") only when the header lines say nothing
        # ("(In millions, issuance by calendar year)": words in parentheses describe something else)
        short = " ".join([*(ln for ln in above[-3:] if len(ln) <= 100 and not ln.rstrip().endswith(".")), header])
        durations = [0] * len(cells) if statement == "balance sheet" else _durations(_CAPTION.sub(" ", short),
                                                                                     len(cells))
        one_end = len({(c[1], c[2]) for c in cells}) <= 1  # one duration ending on different dates is no reading
        if all(d is None for d in durations) and statement != "balance sheet" and one_end:
            durations = _durations(_CAPTION.sub(" ", context), len(cells))
        if form == "10K" and statement in _FLOW_STATEMENTS and all(d is None for d in durations):
            durations = [12] * len(cells)
    out = []
    for (text, month, day, year), months in zip(cells, durations):
        end = f"{year:04d}-{month:02d}-{day:02d}" if month and day else None
        fy = fiscal_year_of(year, month, day)
        out.append(ColumnPeriod(str(text), fy, end, months))
    if form == "10Q":
        # a quarterly report's twelve months ending where its quarter or year to date ends: trailing, not a fiscal
        # year (a 10-Q is never filed for a fiscal year's last quarter)
        ends = {c.end for c in out if c.months in (3, 6, 9)}
        out = [replace(c, trailing=True) if c.months == 12 and c.end in ends else c for c in out]
    keys = [(c.fiscal_year, c.months, c.end) for c in out]
    if len(set(keys)) == len(keys):
        return tuple(out), True
    for line in reversed(above[-3:]):
        names = [n for n in CELL_GAP.split(_NOTE_MARK.sub(" ", line).strip()) if n]
        if len(names) < 2 or len(out) % len(names):
            continue
        span = len(out) // len(names)
        grouped = [replace(c, group=names[i // span]) for i, c in enumerate(out)]
        if len({(c.group, *k) for c, k in zip(grouped, keys)}) == len(keys):
            return tuple(grouped), True
    return tuple(out), False


def _statement(title_lines: list[str]) -> tuple[str, str]:
    """(statement kind, title) from the lines above a table's header. A statement's name counts only in a title
    line — a name before it, nothing like a sentence ("amounts included in our consolidated balance sheets" is
    a note's table, not the balance sheet)."""
    for line in reversed(title_lines):
        for name, rx in _STATEMENTS:
            m = rx.search(line)
            if m and len(line) <= 140 and _titled(line[: m.start()]):
                return name, line.strip()
    return "table", next((ln.strip() for ln in reversed(title_lines) if ln.strip() and not is_column_header(ln)), "")


def _statement_heading(top: Sequence[str]) -> str:
    """The kind of the primary statement whose own heading a page prints above its first row ("equity" for
    "Consolidated Statements of Equity"); "" for none (the page goes on with rows, or prints no such heading)."""
    for line in top:
        if parse_row(line) is not None:
            return ""
        if line.strip() and (kind := _primary_kind(line.strip())):
            return kind
    return ""


def primary_statement(title: str) -> bool:
    """Whether a table's title is a primary statement's own heading ("Consolidated Balance Sheets  Corning
    Incorporated and Subsidiary Companies", "CONSOLIDATED STATEMENTS OF OPERATIONS (In millions)", "Consolidated
    Statements of Operations and Comprehensive Income"): the statement's name with a name before it and after it
    nothing, a parenthesis, another statement ("and …") or a company's name (in a cell of its own, or ending as
    one: "… Inc.", "… and Subsidiaries") — not a sentence that begins with one ("Balance sheet and working capital
    measures are provided below", an MD&A summary) nor a topic ("Key Balance Sheet Data", "NOTE 7. Supplemental
    Balance Sheet Information")."""
    return bool(_primary_kind(title))


# a statement of the parent company alone (Regulation S-X Schedule I, "Condensed Financial Information of
# Registrant"; a bank holding company's "Parent Company" note): its lines are not the consolidated statement's
_PARENT_ONLY = re.compile(r"\bparent\s+(?:company|corporation|only)\b|\bregistrant(?:['’]s)?\s+(?:only|condensed)\b|"
                          r"\bcondensed\s+financial\s+(?:information|statements)\s+of\s+(?:the\s+)?(?:registrant|parent)\b",
                          re.IGNORECASE)


# a table of another entity's figures, introduced as such: an equity-method investee's ("summarized financial
# information of our equity method investees"), another registrant's as its own filings print them ("of Rivian as
# disclosed in its most recent SEC filings"), the guarantors' or the issuer's alone (debt guarantee disclosures, the
# closed group of a deed of cross guarantee) —
# none is the company's own line, and no fact is read from it
_OTHER_ENTITY = re.compile(r"\b(?:financial\s+information|results|financial\s+statements?|balance\s+sheets?)\s+"
                           r"(?:\w+\s+){0,4}?(?:of|for)\s+(?:the\s+|our\s+|its\s+)?(?:[\w-]+\s+){0,3}?investees?\b|"
                           r"\bas\s+(?:disclosed|reported|filed)\s+in\s+its\s+(?:most\s+recent\s+)?(?:sec\s+)?filings?\b|"
                           r"\b(?:non-?)?guarantors?\b|\bobligor\s+group\b|"
                           # the companies party to an Australian deed of cross guarantee (the "closed group")
                           r"\bdeed\s+of\s+cross\s+guarantee\b|\bclosed\s+group\b", re.IGNORECASE)


def parent_only(title: str) -> bool:
    """Whether a statement's title says it is the parent company's alone ("PARENT COMPANY – CONDENSED STATEMENTS
    OF INCOME", "Condensed Financial Information of Registrant", "… (Parent Company Only)")."""
    return bool(_PARENT_ONLY.search(title))


def _primary_kind(title: str) -> str:
    """The statement a primary statement's own heading names ("equity", "cash flows" …; see
    :func:`primary_statement`), "" for a title that is none."""
    line = _SPLIT_LETTER.sub(r"\1\2", re.sub(r"\([^)]*\)?", " ", title))
    if _NOTE_HEADING.match(line.strip()):  # a note's or an item's table
        return ""
    for name, rx in _HEADING_STATEMENTS:
        m = rx.search(line)
        if m and len(line) <= 140 and _titled(line[: m.start()]):
            rest = line[m.end():]
            if not rest.strip(" :,.-–—") or _titled(rest) and (
                    CELL_GAP.match(rest) or _ANOTHER_STATEMENT.match(rest) or _COMPANY.search(rest)):
                return name
    return ""


# a statement's name that goes on into another's ("… of Operations and Comprehensive Income", "… Statements")
_ANOTHER_STATEMENT = re.compile(r"\s*,?\s*(?:and|&)\s|\s+statements?\s*$", re.IGNORECASE)


def _titled(prefix: str) -> bool:
    """The words before a statement's name are a name ("The Boeing Company and Subsidiaries Consolidated"): every
    word capitalised but "and", "of" and "the"."""
    return all(w[0].isupper() or w.lower() in ("and", "of", "the") for w in re.findall(r"[A-Za-z]+", prefix))


def row_unit(label: str) -> str:
    """The unit a row's label gives its cells, as :func:`_unit` reads it for a row without headings."""
    return _unit(label, "", "")


def _unit(label: str, parent: str, outer: str) -> str:
    """The row's unit: USD, USD/share, shares, count, %, ratio or years (a cell printed with "%" is a percentage
    whatever its row). The row's own label decides first, then its heading ("Earnings per share" › "Basic"); a
    heading that prints amounts ("Common stock, $.01 par value; 3,000 shares issued") describes its own row, not
    the unit of the rows under it; nor does an aside in the label's brackets that prints amounts ("Dividends declared
    ($2.585, $2.535, $2.485 per share)": the row is the dividends' amount, the rate an aside)."""
    label = _AMOUNTS_ASIDE.sub(" ", label)
    for text in (label, *(h for h in (parent, outer) if not re.search(r"\d", strip_scale(h)))):
        per_share, shares = _PER_SHARE.search(text), _SHARES.search(text)
        if _PERCENT.search(text):
            return "%"
        if _YEARS.search(text):
            return "years"
        if _RATIO.search(text):
            return "ratio"
        if shares and (per_share is None or shares.start() < per_share.start()):
            return "shares"  # "Shares used in computing earnings per share"
        if per_share:
            return "USD/share"
        if _COUNT.search(text) and not _MONEY.search(text):
            return "count"
    return "USD"


def _scale(unit: str, table: _Table, label: str, parent: str, outer: str) -> str | None:
    """The scale of a row's values: a caption in its label or headings ("Shares used in calculation (000's)"),
    else the table's; money amounts take the filing's usual scale when the table prints none, share and other
    counts only a scale their own table prints; per-share amounts, percentages, ratios and years none."""
    if unit not in ("USD", "shares", "count"):
        return None
    caption = next((c for text in (label, parent, outer) if (c := caption_of(text))), None)
    if caption is None:
        if unit != "USD" and not table.own_scale:
            return None
        caption = table.caption
    return caption.shares if unit == "shares" else caption.amounts


def _is_caption(words: str) -> bool:
    """A line that is a scale caption ("(In millions, except per share data)", "Amounts in thousands"), not a
    heading that prints its rows' scale ("Shares used in calculation (000's)")."""
    return bool(printed_scale(words)) and (words.startswith("(") or scale_caption(words) is not None)


def _sums_to(rows: list[list[float]], total: list[float]) -> bool:
    """Whether ``rows`` add up to ``total`` in every column, give or take their printed rounding."""
    if not rows:
        return False
    for col, value in enumerate(total):
        got = sum(r[col] for r in rows if col < len(r))
        if abs(got - value) > max(1.0, 0.002 * abs(value)):
            return False
    return True


def _unlabeled_total(line: str, heading: str) -> tuple[str, list[str]] | None:
    """A row of values without a label under a heading (a subtotal of the rows above, as many statements print
    revenues and expenses): labelled from its heading."""
    if not heading or not VALUES_ONLY.fullmatch(line) or not re.search(r"\d", line):
        return None
    cells = CELL.findall(line)
    return (f"{heading}{_UNLABELED}", cells) if len(cells) >= 2 else None


_AMOUNT_HEAD = re.compile(r"amounts?", re.IGNORECASE)
_AMOUNT_LINES = 3  # how many lines under a column header may name its amount columns


def _amount_columns(lines: Sequence[tuple[int, int, str]], header: int,
                    periods: int) -> tuple[tuple[int, ...], int, int]:
    """Where each period's amount sits among a row's cells when every period prints more than its amount: a line
    just under the column header naming "Amount" once a period among other cells ("Amount  to Sales  Amount  to
    Sales  (Decrease)" under "2023  2022  Percent"): (the amount cells' positions, how many cells that line prints,
    its index), or ((), 0, -1) when no such line is printed before the first row. A row's value cells line up with
    that line's last cells (its first may be the label column's caption, "(In Millions)")."""
    for k in range(header + 1, min(header + 1 + _AMOUNT_LINES, len(lines))):
        text = lines[k][2].strip()
        if not text:
            continue
        if parse_row(text) is not None:
            break
        cells = [c.strip() for c in CELL_GAP.split(text) if c.strip()]
        amounts = tuple(n for n, c in enumerate(cells) if _AMOUNT_HEAD.fullmatch(c))
        if amounts and len(amounts) == periods and len(cells) > periods:
            return amounts, len(cells), k
    return (), 0, -1


def _cell_spans(line: str, cells: list[str], offset: int) -> list[tuple[int, int]]:
    """Where each value cell is printed in its line (page offsets): found right to left, so a label that
    repeats a cell's digits is never taken for it."""
    spans: list[tuple[int, int]] = []
    right = len(line)
    for printed in reversed(cells):
        at = line.rfind(printed, 0, right)
        if at < 0:  # the reader normalised the cell; point at the rest of the row
            at, right_end = 0, right
        else:
            right_end = at + len(printed)
        spans.append((offset + at, offset + right_end))
        right = at
    return spans[::-1]


_NOTE_MARK = re.compile(r"\(\d\)|\([a-z]\)")
_NOTE_CELL = re.compile(r"(?<=\S)\s{2,}\([a-z]\)(?=\s{2,})")  # a footnote letter in a cell of its own
_AMOUNT = re.compile(r"\s{2,}[(\[$]?\s?\d")  # a cell of figures: a line with one is a row not read, no heading
_UNLABELED = " (unlabeled total)"  # the label given a row of values under a heading
_MAX_LABEL = 240  # a row label with its parenthetical ("net of allowances of $95 and $103")
_CONTINUES = ("/", "-", ",", " and", " of", " to", " from", " in", " for")  # a line that breaks off mid-label
_CONTINUED = re.compile(r"\(?\bcontinued\b\)?", re.IGNORECASE)
_CONTINUED_LINES = 8  # a "(continued)" mark is looked for in this many lines at the top of a page
_PER_SHARE_CELL = re.compile(r"\(?\$?\s?-?\d{0,2}\.\d\d\d?\)?|[—–-]")  # "0.19", "$ (1.05)": a per-share amount


def _closed(cell: str) -> str:
    """A cell that opens a parenthesis and prints no closing one ("(22,680": its ")" set apart in the page's text) is
    an accounting negative all the same."""
    return f"{cell})" if cell.lstrip(" $").startswith("(") and ")" not in cell else cell
_PROSE = re.compile(r"(?:[A-Za-z][\w’'(),/-]*\s+){8}")  # eight words in a row, no figures: a sentence


def extract_facts(pages: Sequence[str], *, form: str | None = None) -> list[StatementFact]:
    """Every fact of every table in a filing's pages. A table split over two pages goes on: rows at the top of a
    page before any column header take the columns of the table the previous page ended in, with high confidence
    only when the page says the table is continued (otherwise they may belong to another table: low). ``form``: the
    filing's form: an annual report's (10-K) titled income, cash-flow and equity statements cover fiscal years, a
    quarterly report's (10-Q) twelve-month columns are trailing periods."""
    kind = _form(form)
    facts: list[StatementFact] = []
    table: _Table | None = None
    # the scale the filing prints most: money in tables that print none takes it (MD&A tables)
    printed = Counter(s for text in pages for s in printed_scales(text))
    scale = printed.most_common(1)[0][0] if printed else None
    for page_index, text in enumerate(pages):
        if kind and _EXHIBIT_99.match(text):
            # an annual or quarterly report's Exhibit 99 pages hold another entity's financial statements (an
            # investee's, filed under Regulation S-X 3-09: "Exhibit 99.3 — CityCenter Holdings, LLC — Consolidated
            # Balance Sheets"): none of their figures is the company's (an 8-K's Exhibit 99.1 is its own release)
            table = None
            continue
        page_facts, table = _page_facts(text, page_index, table, kind, scale)
        facts += page_facts
    return facts


_EXHIBIT_99 = re.compile(r"\s*exhibit\s+99(?:\.\d+)?\s*\n", re.IGNORECASE)


def extract_page_facts(text: str, page_index: int) -> list[StatementFact]:
    """Every fact of every table on one page's text (see the module docstring)."""
    return _page_facts(text, page_index, None, "", None)[0]


def _form(form: str | None) -> str:
    """"10-K", "10-K405", "10-Q/A" -> "10K", "10Q"; other forms (8-K, an unknown one) -> ""."""
    compact = (form or "").upper().replace("-", "")
    return next((k for k in ("10K", "10Q") if compact.startswith(k)), "")


def _page_facts(text: str, page_index: int, carried: _Table | None, form: str,
                scale: str | None) -> tuple[list[StatementFact], _Table | None]:
    """The page's facts and the table open at its end; ``carried``: the table open at the previous page's end;
    ``scale``: the scale the filing prints most."""
    lines: list[tuple[int, int, str]] = []
    pos = 0
    for raw in text.split("\n"):
        lines.append((pos, pos + len(raw), raw))
        pos += len(raw) + 1
    facts: list[StatementFact] = []
    table = carried
    if carried is not None and not _CONTINUED.search("\n".join(ln for _, _, ln in lines[:_CONTINUED_LINES])):
        table = replace(carried, continued=False)
        if (other := _statement_heading([ln for _, _, ln in lines[:_CONTINUED_LINES]])) \
                and other != carried.statement:
            # the page opens with another statement's own heading ("Consolidated Statements of Equity" after the
            # cash flows): its rows are that statement's, whose columns (share capital, retained earnings …) are
            # not the periods the previous page's table printed
            table = None
    parent, pending = "", ""
    rows = 0  # rows the open table gave on this page
    outer = ""  # the heading before the row's parent ("Net income per share" › "Basic" › "Continuing operations")
    above_pending = ""  # a heading line right above the pending one
    after_row = False  # the line before was a row (a row of values only there is their unlabeled total)
    under: list[list[float]] = []  # the values of the rows under the current parent, to check its unlabeled total
    last_unit = ""  # the unit of the row before
    long_line = False  # the line before is too long for a heading: prose, or the start of a row's label
    skip = -1  # lines up to here were read with the header above them
    for i, (start, end, line) in enumerate(lines):
        if not line.strip() or i <= skip:
            continue
        if is_column_header(line):
            block = [ln for _, _, ln in lines[max(0, i - _HEADER_BLOCK): i]]
            rows_above = [k for k, ln in enumerate(block) if parse_row(ln) is not None]
            # the lines between the table above (its last row) and this header: another table's words are not ours
            above = [ln for ln in block[rows_above[-1] + 1 if rows_above else 0:] if ln.strip()]
            if _OTHER_ENTITY.search(" ".join(above[-3:])):
                table = None  # (its rows are read by no header until the next table's)
                continue
            kind, title = _statement(above)
            context = " ".join([*above[-3:], line])
            head = " ".join(ln for _, _, ln in lines[max(0, i - _HEADER_BLOCK): i + 1])
            columns, distinct = _columns(line, context, kind, form, above)
            below = " ".join(ln for _, _, ln in lines[i + 1: i + 3])  # "(in millions)" printed under the years
            own = caption_of(head) or caption_of(below) or caption_of(text[:start], last=True)
            picks, picks_of, through = _amount_columns(lines, i, len(columns))
            skip = through  # the lines under the header that name the amount columns are no heading of rows
            table = _Table(title, kind, columns, own or Caption(scale, None), own is not None,
                           compared=bool(_COMPARISON.search(line)),
                           percent=bool(_PERCENT_TABLE.search(" ".join(above))), distinct=distinct, picks=picks,
                           picks_of=picks_of)
            parent, outer, pending, rows, after_row, under = "", "", "", 0, False, []
            # "Presented in the table below is the per share cash dividends paid": amounts per share from the start
            last_unit = "USD/share" if own is None and _PER_SHARE.search(" ".join(above)) else ""
            long_line = False
            continue
        if table is None:
            continue
        line = _NOTE_CELL.sub(lambda m: " " * len(m[0]), line)  # "Gain on sale  (a)  —  (6)": the mark goes
        row = parse_row(line, max_label=_MAX_LABEL, generic=True) or (
            _unlabeled_total(line, parent or pending) if after_row else None)
        joined = False
        if long_line:
            # the long line before is the start of this row's label ("Common stock …, 4,188 issued and outstanding
            # (4,137 … as of December" / "31, 2022)  34,330  31,580"), or else prose, which ends the table
            long_line = False
            row = parse_row(f"{pending} {line.strip()}", max_label=_MAX_LABEL, generic=True) if (
                not line.strip()[:1].isupper()) else None
            if row is None:
                table, pending = None, ""
                continue
            joined = True
        if row is None and pending and (line[:1].isdigit() or pending.endswith(_CONTINUES)):
            # the rest of a label broken over two lines that opens with a figure ("… net of taxes paid of $18, $17
            # and $11 in" / "2021, 2020 and 2019, respectively  (1)  9  15")
            row = parse_row(f"{pending} {line}", max_label=_MAX_LABEL, generic=True)
            joined = row is not None
        if row is None:
            words = line.strip()
            after_row = False
            if pending and words[:1].islower():  # a heading broken over two lines
                pending = f"{pending} {words}".rstrip(":").strip()
            elif (len(words) <= 120 and not words.endswith(".") and not _AMOUNT.search(words)
                  and not _is_caption(words)):  # a caption "(Amounts in millions, except per share data)" is none
                above_pending, pending = pending, words.rstrip(":").strip()
            elif not _PROSE.match(words) or _AMOUNT.search(words):
                pending = ""  # a row the reader cannot split: no heading
            elif not words.endswith("."):
                pending, long_line = words, True  # prose, or a long label broken over two lines: the next line says
            else:
                pending, table = "", None  # a paragraph ends the table: rows after it are another table's
            continue
        after_row = True
        label, cells = row
        if pending and not joined and (label[:1].islower() or label[:1] == "(" or pending.endswith(_CONTINUES)):
            # a label broken over two lines
            label = f"{pending} {label}"
        elif pending:
            parent, outer, under = pending, above_pending or parent, []
        pending = ""
        spans = _cell_spans(line, cells, start)
        shift = table.picks_of - len(cells)  # the cells of the line naming the amounts left of this row's values
        if table.picks and len(cells) >= 2 * len(table.picks) and all(0 <= k - shift for k in table.picks):
            # each period's amount, its share of sales (its rate, its share count) beside it
            cells, spans = [cells[k - shift] for k in table.picks], [spans[k - shift] for k in table.picks]
        elif (table.compared or table.picks) and len(cells) > len(table.columns):
            # the periods' cells; the changes follow
            cells, spans = cells[: len(table.columns)], spans[: len(table.columns)]
        if len(cells) != len(table.columns):
            continue
        rows += 1
        values = [parse_number(_closed(c), dash=0.0) for c in cells]
        row_parent = parent
        if label.endswith(_UNLABELED) and not _sums_to(under, [v or 0.0 for v in values]):
            label, row_parent = f"Total{_UNLABELED}", ""  # not its heading's rows' total: the table's
        under.append([v or 0.0 for v in values])
        total = bool(_TOTAL.match(label)) or label.endswith(_UNLABELED)
        row_unit = "%" if table.percent else _unit(label, parent, outer)
        if row_unit == "USD" and last_unit == "USD/share" and all(_PER_SHARE_CELL.fullmatch(c) for c in cells):
            row_unit = "USD/share"  # a reconciliation of earnings per share: its adjustments are per share too, and
            # so are the rows of a table introduced as per share amounts
        last_unit = row_unit
        row_scale = _scale(row_unit, table, label, row_parent, outer)
        for col, (printed, value, period, (cell_start, cell_end)) in enumerate(
                zip(cells, values, table.columns, spans)):
            if value is None:
                continue
            if text[cell_end: cell_end + 2] == " %":  # "9 %": a percentage printed with a space
                printed, cell_end = printed + "%", cell_end + 2
            unit, scale = ("%", None) if printed.endswith("%") else (row_unit, row_scale)
            facts.append(StatementFact(
                page_index=page_index, statement=table.statement, title=table.title, label=label,
                parent=row_parent, is_total=total, column=col, period=period, printed=printed, value=value,
                scale=scale, unit=unit, char_start=cell_start, char_end=cell_end,
                confidence="high" if period.months is not None and table.continued and table.distinct else "low"))
        if total and parent and (parent.lower() in label.lower() or label.endswith(_UNLABELED)):
            parent, under = "", []  # "Total current assets" closes "Current assets": the rows after it stand alone
    # only a table that gave rows on this page goes on over the page break (a carried one that gave none has
    # ended; a "header" such as a cover page's "For the fiscal year ended December 31, 2022" starts nothing)
    return facts, table if rows else None


# -- how a stored table reads: its printed heading, its rows' nesting ------------------------------------------------

_HEADING_LINES = 12  # lines above a table's first row searched for its heading
_PERIOD_WORDS = re.compile(rf"^[\s(]*(?:(?:for\s+the\s+)?(?:fiscal\s+)?(?:years?|three|six|nine|twelve|quarters?|"
                           rf"months?|weeks?|periods?)\b|as\s+of\b|at\b|{_MONTH}\s+\d)", re.IGNORECASE)
# a note's, an item's or a numbered section's own heading ("NOTE 6.", "Item 8.", "6.  Investments")
_NOTE_HEADING = re.compile(r"^(?:note\s+\d+|item\s+\d+[a-z]?)\b|^\d{1,2}\.\s+[A-Z]", re.IGNORECASE)
_NOT_HEADING = re.compile(r"table\s+of\s+contents|index|page|\d+|[ivx]+", re.IGNORECASE)  # running heads, folios
# the cover page's lines: its tables (the registrant's address, its securities) have no statement heading
_COVER = re.compile(r"securities\s+and\s+exchange\s+commission|washington,?\s+d\.\s?c\.|pursuant\s+to\s+section\s+1[35]|"
                    r"commission\s+file\s+number|exact\s+name\s+of\s+registrant", re.IGNORECASE)
_COMPANY = re.compile(r"\b(?:inc|corp(?:oration)?|company|companies|co|ltd|plc|llc|subsidiaries|incorporated)\b\.?,?\s*$",
                      re.IGNORECASE)
# a sentence that introduces the table below it ("… is provided in the table that follows.", "Other assets follow
# (in millions):"): skipped for the heading above it
_INTRO = re.compile(r"\b(?:as\s+follows|follows?|(?:the\s+)?following|below|are|is|were|was|consist(?:s|ed)?|"
                    r"comprised|presented|summarized|shown|provided)\b", re.IGNORECASE)
# a number no heading prints: a ZIP code, a file or tax number (a year or a section number is read apart)
_ODD_NUMBER = re.compile(r"(?<![\d.,])(?!(?:19|20)\d\d(?!\d))\d{3,}|\d+-\d{5,}")
# a letter the PDF's text layer printed apart from its word ("Consolidated Balance Shee t", "Cash Flow s")
_SPLIT_LETTER = re.compile(r"\b([A-Z][a-z]+) {1,3}([a-z])(?=$|[\s.,:;)])")


def mend_heading(line: str) -> str:
    """A heading line with its words' spacing mended: runs of spaces as one, a word's last letter printed apart
    from it joined back ("Consolidated Statement of Incom e" → "… of Income")."""
    return _SPLIT_LETTER.sub(r"\1\2", " ".join(line.split()))


def _title_case(words: str) -> bool:
    """Every word capitalised but "and", "of", "the", "in", "for", "to", "on" and "a": a name, not a sentence."""
    letters = re.findall(r"[A-Za-z][\w’'-]*", re.sub(r"\([^)]*\)?", " ", words))
    return bool(letters) and all(w[0].isupper() or w.lower() in ("and", "of", "the", "in", "for", "to", "on", "a")
                                 for w in letters)


def printed_heading(page_text: str, table_start: int) -> tuple[str, str]:
    """(statement kind, heading) of the table whose first row starts at ``table_start`` in ``page_text``: the
    statement's own printed heading above it ("CONSOLIDATED BALANCE SHEETS", "Segment Information", "NOTE 6.
    Supplemental Income Statement Information"), never a column header ("Year ended December 31,"), a scale caption,
    column groups printed over the columns ("Balance sheet  Balance sheet"), a sentence (one introducing the table is
    skipped for the heading above it) or a cover page's lines; ("table", "") when the page prints none between the
    table and the text above it. A word's letter printed apart from it is joined back (:func:`mend_heading`)."""
    lines = page_text[:table_start].split("\n")[:-1]
    # from the table's column header (its headings, "Current assets:", sit between it and the first row)
    header = next((i for i in range(len(lines) - 1, max(-1, len(lines) - 40), -1) if is_column_header(lines[i])), None)
    above = lines[:header][-_HEADING_LINES:] if header is not None else lines[-_HEADING_LINES:]
    found = ""
    sentence = 0  # lines of the sentence introducing the table, read so far
    below_cells = False  # the line just below (no blank between) prints several cells: column labels
    for line in reversed(above):
        words = mend_heading(line)
        if not words:
            below_cells = False
            continue
        if _COVER.search(words):
            return "table", found
        if parse_row(line) is not None and found:
            break  # the table above: its words are not this one's heading
        cells = [c.lower() for c in CELL_GAP.split(line.strip())]
        # a column group's word over the column labels ("Accumulated" over "Additional  Other  Non-"): no heading
        group_word = below_cells and len(words.split()) <= 2 and not _STATEMENT_NAME.search(words)
        below_cells = len(cells) > 1
        if (parse_row(line) is not None or is_column_header(line) or _is_caption(words) or _PERIOD_WORDS.match(words)
                or len(cells) > 1 and (len(set(cells)) < len(cells) or not _STATEMENT_NAME.search(words))
                and not _NOTE_HEADING.match(words) or group_word):
            continue
        for name, rx in _HEADING_STATEMENTS:
            m = rx.search(words)
            # a statement's name in a heading, not in a sentence ("Balance sheet and working capital measures are
            # provided in the following table", an MD&A summary)
            if m and len(words) <= 140 and words[:1].isupper() and _titled(words[: m.start()]):
                if primary_statement(line):
                    return name, words
                if _title_case(words) or words.isupper():  # a heading on the statement ("Key Balance Sheet Data")
                    return "table", words
        wrapped = (words[:1].isdigit() or words[:1].islower()) and not _NOTE_HEADING.match(words)
        if wrapped or _INTRO.search(words) and not _title_case(words) and len(words) <= 240 and words[:1].isupper():
            # a sentence introducing the table ("… is provided in the table that follows.", its wrapped lines): the
            # heading, if any, is above it; a longer paragraph is no introduction and ends the search
            sentence += 1
            if sentence > 2:
                break
            continue
        if not words[:1].isupper() and not _NOTE_HEADING.match(words):
            continue
        if len(words) > 110 or _PROSE.match(words) and not _NOTE_HEADING.match(words) and not _title_case(words):
            break  # a paragraph ends the search: its sentence is no heading
        if _NOT_HEADING.fullmatch(words) or _ODD_NUMBER.search(words):
            continue
        company = bool(_COMPANY.search(words))  # "GENERAL MILLS, INC. AND SUBSIDIARIES": the statement's name is near
        if not found or _NOTE_HEADING.match(words) or words.isupper() and not company:
            found = words
        if _NOTE_HEADING.match(words) or words.isupper() and not company:
            break
    return "table", found


# the statements' names as their headings print them: the equity statement also as "Consolidated Statements of (Total)
# Equity" (ingest's own reading, _STATEMENTS, is left as the stored facts were read with it)
_HEADING_STATEMENTS = (*_STATEMENTS, ("equity", re.compile(
    r"statements?\s+of\s+(?:consolidated\s+)?(?:changes\s+in\s+)?(?:total\s+|shareholders['’]?\s+|"
    r"stockholders['’]?\s+)?equity", re.IGNORECASE)))
_STATEMENT_NAME = re.compile("|".join(rx.pattern for _n, rx in _HEADING_STATEMENTS), re.IGNORECASE)


def table_headings(pages: Sequence[str], starts: Sequence[tuple[int, int]]) -> list[tuple[str, str]]:
    """:func:`printed_heading` of each table of a filing whose first row starts at (page index, character) in
    ``pages``: ("table", "") for a page not stored."""
    return [printed_heading(pages[page], pages[page].rfind("\n", 0, start) + 1) if 0 <= page < len(pages)
            else ("table", "") for page, start in starts]


def listed_statement(stored: str, title: str, printed: str, heading: str) -> str:
    """The statement a table is listed as: a primary statement only when its printed heading (else, when the page
    prints none, its stored title) is that statement's own heading (:func:`primary_statement`); a note's or an
    MD&A table that names one ("NOTE 7. Supplemental Balance Sheet Information", "Balance sheet and working capital
    measures …") is a "table". ``printed``: the kind :func:`printed_heading` read with ``heading``."""
    if heading:
        return printed
    return stored if stored != "table" and primary_statement(title) else "table"


def table_titles(pages: Sequence[str], tables: Sequence[tuple[int, int, str, str]]) -> list[tuple[str, str]]:
    """(statement it is listed as, printed heading) of each table of a filing given as (page index, character its
    first row starts at, stored statement, stored title): :func:`printed_heading` and :func:`listed_statement`."""
    read = table_headings(pages, [(page, start) for page, start, _st, _title in tables])
    return [(listed_statement(st, title, kind, heading), heading)
            for (_page, _start, st, title), (kind, heading) in zip(tables, read, strict=True)]
