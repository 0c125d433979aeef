"""The periods a question asks about: years, quarters, ranges, and the periods a question implies.

Decisions worth knowing:
- ``fiscal_years`` holds every year the question concerns (stated, from a quarter, or implied);
  ``annual_years`` only those asked about as whole years, so "Q2 2023" gives fiscal_years (2023,) but
  period_labels ["2023Q2"]. "FY2017 - FY2019", "from FY2019 to FY2021" are inclusive ranges;
  "between 2019 and 2021" gives the two endpoints (a comparison of two periods). Two-digit years
  need a prefix (FY22, fiscal '22, Q1'23). Amounts ($2019, 2,019, 2018.5, 2019 million) are not years.
- Implied periods: a year-over-year question about one stated year adds the prior year; QoQ about one
  quarter adds the previous quarter; "3 year average ... FY2019" adds the two earlier years.
  With ``today_year``, "last year"/"this year"/"past N years" resolve when no year is stated.
- Quarters are "YYYYQn". "quarter ended June 30, 2023" maps by calendar month (the issuer's fiscal
  calendar is unknown here); "H1"/"six months ended June 30" map to Q2, the 10-Q that reports them.
"""

from __future__ import annotations

import calendar
import itertools
import re
from dataclasses import dataclass
from datetime import date, timedelta

from engine.intent.wordlists import whole_words
from engine.records import QueryIntent

_Y4 = r"(?:19[89]|20\d)\d"
_FISC = r"(?:fiscal(?:\s+years?)?|FY)"
_OF = r"(?:\s+of)?(?:\s+the)?"
_ORD = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4}
_MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
_QUARTER_RES = tuple(re.compile(p, re.IGNORECASE) for p in (  # tried in order; each match is blanked out
    rf"\b(?:FY\s?)?(?P<y>{_Y4})\s?-?\s?Q(?P<q>[1-4])\b|\bFY\s?(?P<yy>\d\d)\s?-?\s?Q(?P<q2>[1-4])\b",
    (rf"\bQ(?P<q>[1-4]){_OF}(?:\s*{_FISC})?\s*'?(?P<y>{_Y4})\b"
     rf"|\bQ(?P<q2>[1-4]){_OF}(?:\s*{_FISC}\s*'?|\s*')(?P<yy>\d\d)\b"),
    rf"\b(?P<q>[1-4])Q\s?'?(?:(?P<y>{_Y4})|(?P<yy>\d\d))\b",
    (rf"\b(?P<o>first|second|third|fourth|1st|2nd|3rd|4th)[\s-]+(?:fiscal\s+)?quarter{_OF}"
     rf"(?:(?:\s*{_FISC})?\s*(?P<y>{_Y4})\b|\s*{_FISC}\s*'?(?P<yy>\d\d)\b)?"),
    rf"\b{_FISC}\s*'?(?:(?P<y>{_Y4})|(?P<yy>\d\d))[\s,]+(?P<o>first|second|third|fourth)[\s-]+quarter",
    (rf"\b(?:quarter|(?:three|six|nine|3|6|9)\s+months)\s+end(?:ed|ing)\s+(?P<m>[a-z]{{3}})[a-z]*\.?"
     rf"\s+\d{{1,2}},?\s+(?P<y>{_Y4})"),
    rf"\b(?:H1|1H|first\s+half){_OF}(?:\s*{_FISC})?\s*'?(?:(?P<y>{_Y4})|(?P<yy>\d\d)\b)",
    r"\bQ(?P<q>[1-4])\b",
))
_YEAR_RE = re.compile(
    rf"(?:\b{_FISC}\s*'?(?P<yy>\d\d(?!\d)|{_Y4}(?!\d))|(?<![\d$.,])(?<!\$\s)(?P<y>{_Y4})(?!\d|[.,]\d))"
    r"(?!\s*(?:%|(?:percent|million|billion|thousand|bn|mn)\b))", re.IGNORECASE)
_REPORT = r"(?:(?:form\s+)?10-?K(?:\s+(?:filing|report))?|annual\s+report)"
_FILING_YEAR = re.compile(
    rf"(?:\b{_FISC}\s*'?(?:{_Y4}|\d\d)|\b{_Y4})(?:['’]s)?\s+{_REPORT}"
    rf"|\b{_REPORT}\s+(?:for|of|covering)\s+(?:the\s+)?(?:(?:{_FISC})\s*'?)?(?:{_Y4}|(?<=FY)\d\d)\b", re.IGNORECASE)
_RANGE_GAP = re.compile(r"\s*(?:-|–|—|to|through|thru|until)\s*", re.IGNORECASE)
_YOY = re.compile(r"\b(?:yoy|y/y|year[\s-]+(?:over|on)[\s-]+year|"
                  r"(?:prior|previous)[\s-]+(?:fiscal\s+)?year)\b", re.IGNORECASE)
_QOQ = re.compile(r"\b(?:qoq|q/q|quarter[\s-]+(?:over|on)[\s-]+quarter|sequential\w*|"
                  r"(?:prior|previous)\s+quarter)\b", re.IGNORECASE)
_NYEAR = re.compile(r"\b(\d|two|three|four|five)[\s-]+years?\s+(average|avg|cagr)", re.IGNORECASE)
_NUMWORD = {"two": 2, "three": 3, "four": 4, "five": 5}
_RELATIVE = re.compile(r"\b(?:(this|current|last|past|prior|previous)\s+(?:fiscal\s+)?year"
                       r"|(last|past)\s+(\w+)\s+(?:fiscal\s+)?years)\b", re.IGNORECASE)


# A year to date as a question writes it: its months, or a quarter's year to date ("YTD Q3": nine months)
_YTD = tuple((months, re.compile(p, re.IGNORECASE)) for months, p in (
    (6, r"\b(?:h1|1h|first\s+half|(?:first\s+)?(?:six|6)\s+months|first\s+two\s+(?:fiscal\s+)?quarters)\b"),
    (9, r"\b(?:(?:first\s+)?(?:nine|9)\s+months|first\s+three\s+(?:fiscal\s+)?quarters)\b"),
    (0, r"\b(?:ytd|year[\s-]+to[\s-]+date|cumulative)\b"),
))
# words that only say where a period ends or runs ("ended", "through the third quarter"), read with it
_PERIOD_WORDS = re.compile(r"\b(?:(?:three|six|nine|twelve|3|6|9|12)\s+months|quarter|(?:fiscal\s+)?year)?\s*"
                           r"(?:end(?:ed|ing)|through|thru)(?:\s+the)?\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class AskedPeriods:
    """The periods of one question: whole years, quarter labels, and every year either concerns."""

    annual: tuple[int, ...]
    quarters: tuple[str, ...]
    fiscal_years: tuple[int, ...]
    stated_quarters: tuple[int, ...]  # the quarter numbers written in the question, with or without a year
    ytd_months: int = 0  # a year to date asked: 6 (H1, six months), 9 (nine months, YTD Q3); 0: not asked
    quarter_run: int = 0  # several quarters asked without naming them (quarter_run below); 0: not asked
    year_run: int = 0  # several whole years asked as a run (year_run below); 0: not asked
    since: int = 0  # the year a run "since FY2021" starts in (since_year below); 0: not asked
    report_year: int = 0  # the fiscal year of an annual report the question names ("in its FY2023 10-K"); 0: none


def _year(y: str | None, yy: str | None) -> int | None:
    if y or yy:
        v = int(y or yy or 0)
        return v if v >= 1000 else (2000 + v if v < 80 else 1900 + v)
    return None


def _periods(text: str, today_year: int | None) -> tuple[list[int], list[tuple[int | None, int]]]:
    """Whole years asked about and (year or None, quarter) pairs; quarters are blanked before years."""
    work, quarters = text, list[tuple[int, int | None, int]]()
    for rx in _QUARTER_RES:
        for m in rx.finditer(work):
            g = m.groupdict()
            if g.get("m"):
                if g["m"].lower() not in _MONTHS:
                    continue
                q = _MONTHS.index(g["m"].lower()) // 3 + 1
            elif g.get("o"):
                q = _ORD[g["o"].lower()]
            else:  # the half-year pattern has no quarter group: H1 is reported in the Q2 10-Q
                q = int(g.get("q") or g.get("q2") or 2)
            quarters.append((m.start(), _year(g.get("y"), g.get("yy")), q))
            work = work[: m.start()] + " " * (m.end() - m.start()) + work[m.end():]
    # the year of an annual report the question names ("in its 10-K for 2023", "the FY2022 10-K") says where to look;
    # where another period is asked ("… what was net income in FY2021?") it is no period asked
    named = [m.span() for m in _FILING_YEAR.finditer(work)]
    if named:
        bare = work
        for a, b in named:
            bare = bare[:a] + " " * (b - a) + bare[b:]
        if any(y for _, y, _ in quarters) or any(_year(m["y"], m["yy"]) for m in _YEAR_RE.finditer(bare)):
            work = bare
    top = today_year + 10 if today_year else 2099
    hits = [(m, y) for m in _YEAR_RE.finditer(work) if (y := _year(m["y"], m["yy"])) and 1980 <= y <= top]
    years = [y for _, y in hits]
    for (m1, y1), (m2, y2) in itertools.pairwise(hits):
        if 0 < y2 - y1 <= 15 and _RANGE_GAP.fullmatch(work[m1.end(): m2.start()]):
            years += range(y1 + 1, y2)
    if not years and not quarters and today_year:
        for m in _RELATIVE.finditer(text):
            if m[1]:
                years.append(today_year if m[1].lower() in ("this", "current") else today_year - 1)
            else:
                n = int(m[3]) if m[3].isdigit() else _NUMWORD.get(m[3].lower(), 0)
                years += range(today_year - n, today_year)
    return years, [(y, q) for _, y, q in sorted(quarters)]


def asked_periods(text: str, today_year: int | None = None) -> AskedPeriods:
    """The stated periods of ``text`` plus those it implies (prior year, previous quarter, N-year spans, the
    quarter whose 10-Q reports a year to date: "the first nine months of 2023" is 2023Q3)."""
    years, raw_quarters = _periods(text, today_year)
    ytd = _ytd_months(text, [q for _, q in raw_quarters])
    if ytd in (6, 9) and not raw_quarters and len(set(years)) == 1:
        raw_quarters, years = [(years[0], ytd // 3)], []
    lone = sorted(set(years))  # a yearless "Q3" takes the question's only year
    quarters = [(yr, q) for y, q in raw_quarters if (yr := y or (lone[0] if len(lone) == 1 else 0))]
    if len(set(years)) == 1 and not quarters and _YOY.search(text):
        years.append(years[0] - 1)
    if len(quarters) == 1:
        y, q = quarters[0]
        if _QOQ.search(text):
            quarters.append((y - 1, 4) if q == 1 else (y, q - 1))
        elif _YOY.search(text):
            quarters.append((y - 1, q))
    if (m := _NYEAR.search(text)) and len(set(years)) == 1:
        n = int(m[1]) if m[1].isdigit() else _NUMWORD[m[1].lower()]
        years += range(years[0] - n + (m[2].lower() != "cagr"), years[0])  # a 3-year CAGR spans 4 year-ends
    annual = tuple(sorted(set(years)))
    return AskedPeriods(
        annual=annual, quarters=tuple(sorted({f"{y}Q{q}" for y, q in quarters})),
        fiscal_years=tuple(sorted(set(annual) | {y for y, _ in quarters})),
        stated_quarters=tuple(q for _, q in raw_quarters), ytd_months=ytd, quarter_run=quarter_run(text),
        year_run=0 if quarters else year_run(text), since=0 if quarters else since_year(text),
        report_year=named_report_year(text),
    )


def named_report_year(text: str) -> int:
    """The fiscal year of the annual report ``text`` names ("in its 10-K for 2023", "the FY2022 10-K", "the 2022 annual
    report"), 0 when it names none or two: where it asks another year, the figure is read as that report prints it
    (a later report's comparative column, restated or not)."""
    years = {y for m in _FILING_YEAR.finditer(text) for y in
             (_year(n["y"], n["yy"]) for n in _YEAR_RE.finditer(m[0])) if y}
    return years.pop() if len(years) == 1 else 0


# Several quarters asked without naming them: "the last four quarters", "the three most recent 10-Qs" (their count),
# "these quarters", "each quarter", "quarter by quarter", "compared to previous quarters" (every quarter the library
# holds: EVERY_QUARTER). "the first two quarters" is a year to date (_YTD), and "the previous quarter" one quarter.
EVERY_QUARTER = -1
_COUNT = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8}
_N = r"(?P<n>[2-8]|two|three|four|five|six|seven|eight)"
_QUARTERS = r"(?:fiscal\s+)?(?:quarters|10-?qs|quarterly\s+(?:reports|filings|periods|results))\b"
_RECENT = r"(?:last|past|previous|prior|preceding|latest|most\s+recent|recent|trailing)"


def _runs(noun: str, unit: str) -> tuple[re.Pattern[str], ...]:
    """The wordings of a run of ``noun`` (plural pattern) by their count ("the last four quarters", "the three most
    recent fiscal years", "each of the past 3 years") and with none ("each quarter", "year by year")."""
    return (
        re.compile(rf"\b(?:(?:each|every|all)\s+of\s+)?(?:the\s+)?{_RECENT}\s+{_N}\s+{noun}", re.IGNORECASE),
        re.compile(rf"\b(?:(?:each|every|all)\s+of\s+)?(?:the\s+)?{_N}\s+{_RECENT}\s+{noun}", re.IGNORECASE),
        re.compile(rf"\b(?:each|every)\s+(?:fiscal\s+)?{unit}\b|\b{unit}[\s-]+by[\s-]+{unit}\b", re.IGNORECASE),
    )


_RUN_RES = (*_runs(_QUARTERS, "quarter"), re.compile(
    rf"\b(?:(?:each|every|all)\s+of\s+)?(?:these|those|the|all|all\s+the|{_RECENT})\s+(?:various\s+)?{_QUARTERS}",
    re.IGNORECASE))
# the words that only say the run is compared ("how does it compare across the periods"), read as the run's
_ACROSS = re.compile(r"\b(?:across|throughout|over)\s+(?:(?:each|all)\s+of\s+)?(?:these|those|the|all)?\s*"
                     r"(?:various\s+)?(?:periods|quarters)\b", re.IGNORECASE)


# Several whole years asked as a run: "each of the last three fiscal years", "the past 3 years", "the three most
# recent years" (their count), "each year", "year by year", "each of these years" (EVERY_YEAR: the years the
# question names, or EVERY_YEAR_HELD of the latest). "the last year", "the prior year" are one year (_RELATIVE), and
# "a 3-year CAGR" or "3-year average" one computation (_NYEAR).
EVERY_YEAR = -1
_YEARS = r"(?:fiscal\s+|financial\s+)?years\b"
_YEAR_RUN_RES = (*_runs(_YEARS, "year"), re.compile(
    r"\b(?:each|every|all)\s+of\s+(?:these|those|the)\s+(?:fiscal\s+)?years\b", re.IGNORECASE))


# A run from a year to the latest ("since FY2021", "since fiscal 2020", "since the end of 2019"): the year it
# starts in; the company check ends it at the company's latest loaded 10-K
_SINCE = re.compile(rf"\bsince\s+(?:the\s+end\s+of\s+)?(?:(?:{_FISC}|fiscal)\s*'?)?(?:(?P<y>{_Y4})\b|(?P<yy>\d\d)\b)",
                    re.IGNORECASE)


def since_year(text: str) -> int:
    """The year a run "since FY2021" starts in (0: none asked); a two-digit year needs its prefix ("since FY21")."""
    m = _SINCE.search(text)
    if m is None or (m["yy"] and not re.search(r"(?:FY|fiscal)\s*'?\d\d$", m.group(0), re.IGNORECASE)):
        return 0
    return _year(m["y"], m["yy"]) or 0


def _run_count(res: tuple[re.Pattern[str], ...], text: str) -> int:
    """The count the first run wording that ``text`` writes gives (-1: a run with no count), 0: none written."""
    for rx in res:
        if m := rx.search(text):
            n = m.groupdict().get("n")
            return -1 if not n else int(n) if n.isdigit() else _COUNT[n.lower()]
    return 0


def year_run(text: str) -> int:
    """How many of the latest fiscal years a question asks as a run without naming them ("the last three fiscal
    years": 3), EVERY_YEAR where it writes no count ("each year from 2020 to 2022", "year by year", "since
    FY2021"), 0 where it asks no run of years."""
    return _run_count(_YEAR_RUN_RES, text) or (EVERY_YEAR if since_year(text) else 0)


def quarter_run(text: str) -> int:
    """How many of the latest quarters a question asks without naming them: the count it writes ("the last four
    quarters": 4), EVERY_QUARTER where it writes none ("these quarters", "each quarter"), 0 where it asks no run."""
    return _run_count(_RUN_RES, text)


def _ytd_months(text: str, quarters: list[int]) -> int:
    """The months of the year to date a question asks (0: none): stated ("nine months", "H1"), or a quarter's
    ("YTD Q3", "year to date through the third quarter": nine)."""
    for months, rx in _YTD:
        if rx.search(text):
            return months or (3 * quarters[0] if len(set(quarters)) == 1 and quarters[0] > 1 else 0)
    return 0


def period_spans(text: str) -> list[tuple[int, int]]:
    """Where ``text`` writes a period other than a bare year, as the readers above read it: quarters, halves and
    years to date, days, and the words that say where such a period ends or runs ("six months ended June 30,
    2023", "through the third quarter of 2023"). The question reader claims these spans as periods, not as words
    of the metric (a bare year it reads itself: "FY2019 revenue minus FY2018 revenue")."""
    found = [(m.start(), m.end()) for rx in (*_QUARTER_RES, _DATE, _DATE_DAY_FIRST, *(rx for _, rx in _YTD))
             for m in rx.finditer(text)]
    found += [(m.start(), m.end()) for rx in (_BARE_PERIOD, *_RUN_RES, _ACROSS, *_YEAR_RUN_RES, _SINCE)
              for m in rx.finditer(text)]
    spans: list[tuple[int, int]] = []
    for start, end in sorted(found):
        lead = _PERIOD_WORDS.search(text, max(0, start - 40), start)
        if lead and lead.group(0).strip():
            start = lead.start() + len(lead.group(0)) - len(lead.group(0).lstrip())
        if spans and start <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(end, spans[-1][1]))
        else:
            spans.append((start, end))
    return spans


_BARE_PERIOD = re.compile(r"\b(?:h[12]|[12]h|first half|second half|(?:three|six|nine|twelve|3|6|9|12) months|"
                          r"(?:first|second|third|fourth) (?:fiscal )?quarter|ttm|trailing twelve months)\b",
                          re.IGNORECASE)


_MONTH = r"(?P<m>jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_DAY = r"(?P<d>\d{1,2})(?:st|nd|rd|th)?"
_DATE = re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+(?P<y>{_Y4})\b", re.IGNORECASE)  # "August 30, 2023", "July 1st, 2022"
_DATE_DAY_FIRST = re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+(?P<y>{_Y4})\b", re.IGNORECASE)  # "1st July 2022"


def asked_date(text: str) -> date | None:
    """The latest day a question names ("as of August 30, 2023", "the quarter ended June 30, 2023"), or None."""
    days = []
    for m in (*_DATE.finditer(text), *_DATE_DAY_FIRST.finditer(text)):
        try:
            days.append(date(int(m["y"]), _MONTHS.index(m["m"].lower()) + 1, int(m["d"])))
        except ValueError:  # "February 30"
            continue
    return max(days, default=None)


_PERIOD_LABEL = re.compile(r"(?:ended|ending|as\s+of|through|at|to)\s*$", re.IGNORECASE)


def dates_in(text: str, events: bool = False) -> list[date]:
    """Every day a text names ("On March 4, 2022, we completed …", "1st July 2022"), in order of appearance;
    ``events``: only the days things happened on, not a period's end ("Three Months Ended March 31, 2023", "as of
    June 30"), and for a quarter a thing happened in ("In the first quarter of 2023, we issued …", "in Q3 2022") the
    last day of that calendar quarter (a fiscal quarter of a year that ends in another month ends earlier: a check
    that the day is not before a period errs toward keeping the sentence)."""
    found: list[tuple[int, date]] = []
    if events:
        for rx in _QUARTER_RES:
            for m in rx.finditer(text):
                g = m.groupdict()
                year = _year(g.get("y"), g.get("yy"))
                quarter = _ORD[g["o"].lower()] if g.get("o") else int(g.get("q") or g.get("q2") or 0)
                if year is None or not quarter or g.get("m"):  # (no year, or a period's end: "quarter ended …")
                    continue
                end = date(year, quarter * 3, calendar.monthrange(year, quarter * 3)[1])
                found.append((m.start(), end))
    for m in (*_DATE.finditer(text), *_DATE_DAY_FIRST.finditer(text)):
        if events and _PERIOD_LABEL.search(text, 0, m.start()):
            continue
        try:
            found.append((m.start(), date(int(m["y"]), _MONTHS.index(m["m"].lower()[:3]) + 1, int(m["d"]))))
        except ValueError:  # "February 30"
            continue
    return [d for _, d in sorted(found)]


def period_start(end: date, months: int) -> date:
    """The first day of the ``months`` months that end on ``end`` (a quarter ended July 1, 2023: April 2, 2023)."""
    y, m = divmod(end.month - 1 - months, 12)
    y, m = end.year + y, m + 1
    return date(y, m, min(end.day, calendar.monthrange(y, m)[1])) + timedelta(days=1)


def with_fiscal_years(low: str) -> str:
    """Lowercased text with "fy22", "fy 2022" and "fy'22" written as the four-digit year "2022"."""
    return re.sub(r"\bfy\s?'?(\d{4}|\d\d)\b", lambda m: str(_year(None, m[1])), low)


def period_labels(intent: QueryIntent) -> list[str]:
    """Filing period labels the question points at, e.g. ["2018"], ["2023Q2"] or ["2023", "2024Q2"]."""
    q_years = {int(q[:4]) for q in intent.quarters}
    years = intent.annual_years if intent.annual_years is not None else [
        y for y in intent.fiscal_years if y not in q_years]
    return sorted([str(y) for y in years] + list(intent.quarters))


def looks_ahead(text: str) -> bool:
    """Whether a question asks about what is expected, planned or guided (``resources/reader/forward.txt``): a
    year it names may be one no filing reports yet."""
    return whole_words("forward").search(text) is not None
