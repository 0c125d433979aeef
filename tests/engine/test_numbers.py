"""The one reader of printed numbers and scales (engine.vocab.numbers), on the shapes filings print."""

from __future__ import annotations

import pytest

from engine.chunking import is_header_row, is_table_row, parse_row
from engine.train.mining import _is_header
from engine.vocab.numbers import (
    CELL,
    MENTION,
    NUMBER,
    SCALE_FACTORS,
    caption_of,
    is_number_cell,
    numbers_in,
    numerals_in,
    parse_number,
    printed_scale,
    scale_caption,
    scale_word,
)


# ------------------------------------------------------------------------------------------------ figures
@pytest.mark.parametrize(("token", "value"), [
    ("(1,577)", -1577.0),  # accounting negative
    ("( 1,577 )", -1577.0),
    ("-3", -3.0),
    ("(-3)", -3.0),  # parentheses and a minus: still one negative
    ("$ 2,019.5", 2019.5),
    ("$1,234,567", 1234567.0),
    ("12.3%", 12.3),
    # a unit printed outside the parentheses keeps them a negative (a comparable sales change "(6.4)%")
    ("(6.4)%", -6.4),
    ("(6.4) %", -6.4),
    ("$(12)", -12.0),
    ("(0.5) pts", -0.5),
    ("0", 0.0),
    ("2022", 2022.0),
])
def test_parse_number_reads_printed_figures(token: str, value: float) -> None:
    assert parse_number(token) == value


@pytest.mark.parametrize("token", ["—", "–", "-", "", "$", "n/a", "1.2.3", "1-2", "(", "()"])
def test_parse_number_refuses_what_is_not_one_figure(token: str) -> None:
    assert parse_number(token) is None


def test_a_dash_reads_as_nil_only_when_the_caller_asks() -> None:
    assert parse_number("—") is None
    assert parse_number("—", dash=0.0) == 0.0
    assert parse_number(" – ", dash=0.0) == 0.0
    assert parse_number("(12)", dash=0.0) == -12.0  # figures are unaffected


def test_number_finds_figures_in_text_and_rows() -> None:
    row = "Purchases of property and equipment  $ (1,577)  $ (1,373)"
    assert [parse_number(t) for t in NUMBER.findall(row)] == [-1577.0, -1373.0]
    assert NUMBER.findall("Revenue was $ 2,019.5 million") == ["$ 2,019.5"]


def test_numbers_in_reads_every_figure_signed() -> None:
    text = "Net loss of (3.4) on revenue of $1,577 million in fiscal 2022."
    assert numbers_in(text) == {-3.4, 1577.0, 2022.0}
    assert numbers_in("No figures here.") == set()


def test_numerals_in_keeps_figures_as_written() -> None:
    assert numerals_in("$1,577.0 and 1,577, then 12") == {"1577.0", "1577", "12"}


def test_cells_keep_dashes_and_percentages_so_columns_stay_aligned() -> None:
    assert CELL.findall("(1,577)  —  12.3%  –") == ["(1,577)", "—", "12.3%", "–"]
    assert parse_row("Other income, net  (12)  —  4.5%") == ("Other income, net", ["(12)", "—", "4.5%"])


@pytest.mark.parametrize(("cell", "is_figure"), [
    ("(1,577)", True), ("$(12)", True), ("$1,577", True), (".50", True), ("12.3%", True), ("-3", True),
    ("—", False), ("n/a", False), ("FY2022", False), ("1-2", False), ("12a", False), ("", False),
])
def test_is_number_cell(cell: str, is_figure: bool) -> None:
    assert is_number_cell(cell) is is_figure


def test_a_table_row_needs_a_figure_after_its_label() -> None:
    assert is_table_row("Capital expenditures  $(1,577)  $(1,373)")
    assert not is_table_row("Capital expenditures  n/a  n/a")


# ------------------------------------------------------------------------------------------------ mentions
def test_mention_reads_currency_scale_and_percent() -> None:
    m = MENTION.fullmatch("$1.2 billion")
    assert m is not None and (m["num"], m["word"], m["cur0"]) == ("1.2", "billion", "$")
    m = MENTION.fullmatch("US$ 5bn")
    assert m is not None and (m["num"], m["abbr"]) == ("5", "bn")
    m = MENTION.fullmatch("-14.0%")
    assert m is not None and (m["sign"], m["num"], m["pct"]) == ("-", "14.0", "%")


def test_mention_skips_identifiers_glued_to_letters() -> None:
    assert [m["num"] for m in MENTION.finditer("FY2022 10-K: Q2 revenue of $1.8 bn, COVID-19")] == ["1.8"]


# ------------------------------------------------------------------------------------------------ scales
@pytest.mark.parametrize(("text", "scale"), [
    ("(Millions)", "millions"),
    ("(In thousands, except per share amounts)", "thousands"),
    ("($ in billions)", "billions"),
    ("(Dollars in Millions)", "millions"),
    ("CONSOLIDATED STATEMENTS OF CASH FLOWS (in millions)", "millions"),
    ("Amounts in thousands", "thousands"),
    ("Revenue grew 5% to $3.1 billion.", None),  # a figure in prose, not the scale of the passage
    ("We had 2,000 employees.", None),
    ("Shares used in calculation (000's)", "thousands"),  # the zeros left out
    ("($000)", "thousands"),
    ("(in 000s)", "thousands"),
    ("Gross margin rose 2,000 basis points", None),
])
def test_printed_scale(text: str, scale: str | None) -> None:
    assert printed_scale(text) == scale


@pytest.mark.parametrize(("text", "amounts", "shares"), [
    ("(In millions, except per share data)", "millions", "millions"),  # only per-share amounts are excepted
    ("(In thousands, except share and per share data)", "thousands", None),  # shares printed in full
    ("(in millions, except per share amounts and number of shares)", "millions", None),
    ("(In millions, except number of shares, which are reflected in thousands, and per-share amounts)",
     "millions", "thousands"),
    ("(Dollars in millions, except share data in thousands)", "millions", "thousands"),
    ("(In millions, except per share and share price data)", "millions", "millions"),  # a price is not a count
    ("Shares (000’s)", "thousands", "thousands"),
    ("Net sales grew to $3.1 billion", None, None),
])
def test_caption_reads_the_scales_of_amounts_and_shares_apart(text: str, amounts: str | None,
                                                             shares: str | None) -> None:
    caption = caption_of(text)
    assert ((caption.amounts, caption.shares) if caption else (None, None)) == (amounts, shares)


@pytest.mark.parametrize(("label", "scale"), [
    ("(In millions", "millions"), ("In thousands", "thousands"), ("Dollars in thousands", "thousands"),
    ("$ in billions", "billions"), ("Amounts in millions, except per share data", "millions"),
    ("Total revenue", None), ("Revenue in millions", None),  # only a label that opens with the caption
])
def test_scale_caption(label: str, scale: str | None) -> None:
    assert scale_caption(label) == scale


def test_a_scale_caption_is_not_a_statement_row() -> None:
    assert parse_row("(In millions)  1,577  1,373") is None
    assert parse_row("Revenue in millions  1,577  1,373") == ("Revenue in millions", ["1,577", "1,373"])


@pytest.mark.parametrize(("word", "scale"), [
    ("Billions", "billion"), ("billion", "billion"), ("bn", "billion"), ("B", "billion"), ("mm", "million"),
    ("M", "million"), ("k", "thousand"), ("Thousands", "thousand"), ("tn", "trillion"),
    ("dozen", None), ("", None), (None, None), ("s", None),
])
def test_scale_word(word: str | None, scale: str | None) -> None:
    assert scale_word(word) == scale


def test_scale_factors_convert_between_printed_scales() -> None:
    assert SCALE_FACTORS["thousands"] == 1e3 and SCALE_FACTORS["millions"] == 1e6
    assert SCALE_FACTORS["billions"] == 1e9
    assert 1577 * SCALE_FACTORS["millions"] / SCALE_FACTORS["billions"] == pytest.approx(1.577)


# --------------------------------------------------------------------------------------- column headers
def test_one_header_detector_mining_refuses_the_prose_it_lets_through() -> None:
    header = "Years Ended December 31,  2022  2021"
    assert is_header_row(header) and _is_header(header)
    assert is_header_row("Three Months Ended June 30, 2022") and _is_header("Three Months Ended June 30, 2022")
    prose = "on Form 10-K for the year ended December 31, 2021."
    assert is_header_row(prose)  # chunking's loose detector (its chunk contexts depend on it) ...
    assert not _is_header(prose)  # ... and mining refuses a sentence
    assert not _is_header("the 2023 annual meeting of shareholders.")
    assert not is_header_row("Revenue grew in 2022") and not _is_header("Revenue grew in 2022")
    assert not _is_header("Balance at December 31, 2022  1,577  1,373")  # a statement row, not a header
