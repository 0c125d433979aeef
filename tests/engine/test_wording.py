"""Counts read right at every number (the app's labels, status lines and trace summaries use them)."""

from engine.wording import counted


def test_counted_takes_the_number_the_count_needs():
    assert counted(1, "page") == "1 page" and counted(0, "page") == "0 pages" and counted(2, "input") == "2 inputs"
    assert counted(1204, "filing") == "1,204 filings" and counted(3, "query", "queries") == "3 queries"
