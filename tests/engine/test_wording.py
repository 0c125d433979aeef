"""Counts read right at every number (the app's labels, status lines and trace summaries use them)."""

from engine.wording import counted


def test_counted_takes_the_number_the_count_needs():
    assert counted(1, "page") == "1 page" and counted(0, "page") == "0 pages" and counted(2, "input") == "2 inputs"
    assert counted(1204, "filing") == "1,204 filings" and counted(3, "query", "queries") == "3 queries"


def test_an_answer_s_lead_sentence_is_its_first_whole_sentence() -> None:
    from engine.wording import lead_sentence

    parts = ("MGM China: revenue growth against the year before -44.37% (1,210.76 USD millions in FY2021 to 673.59 "
             "USD millions in FY2022), the lowest of the 3 parts of 'Reportable segment net revenues' (MGM_2022_10K "
             "p. 38 (printed 36), FY2022), which they add up to. Las Vegas Strip Resorts: +77.29%; Regional "
             "Operations: +12.48%.")
    head, rest = lead_sentence(parts)
    assert head.endswith("which they add up to.") and rest.startswith("Las Vegas Strip Resorts:")
    assert lead_sentence("64.83 days") == ("64.83 days", "")
    assert lead_sentence("Yes. Gross margin rose from 21.4% to 22.5%.") == ("Yes.", "Gross margin rose from 21.4% to "
                                                                              "22.5%.")
    # abbreviations, initials and decimals do not end a sentence
    head, rest = lead_sentence("Apple Inc. reported 3.5 billion in U.S. sales. The rest followed.")
    assert head == "Apple Inc. reported 3.5 billion in U.S. sales." and rest == "The rest followed."
    assert lead_sentence("Revenue was 1,577 USD millions (see p. 38. Note 4).")[1] == ""
    # a sentence that ends in a bracket or a percent sign ends there (a named part's headline, then the others)
    assert lead_sentence("Personal Computing: 13,666 USD millions (24.2% of 56,517). The others: Cloud.") == (
        "Personal Computing: 13,666 USD millions (24.2% of 56,517).", "The others: Cloud.")
    assert lead_sentence("Margin rose to 22.5%. It was 21.4% before.")[0] == "Margin rose to 22.5%."
    # a heading line and its lines (a metric quarter by quarter): the heading leads, the lines stay lines
    assert lead_sentence("Effective tax rate, quarter by quarter:\n- 2023Q3 (3M to 2023-07-01): 12.55% [1]\n"
                         "- 2024Q1 (3M to 2023-12-30): 15.89% [2]") == (
        "Effective tax rate, quarter by quarter:", "- 2023Q3 (3M to 2023-07-01): 12.55% [1]\n"
                                                   "- 2024Q1 (3M to 2023-12-30): 15.89% [2]")
