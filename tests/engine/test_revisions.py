"""Revisions a filing prints of its own figures (engine.answer.revisions): "by how many points did X raise its
guidance" answered by the engine from "9 percent … (previously 8 percent)", the quote cited, no model call."""

from __future__ import annotations

import pytest

from engine.answer.quotes import answer_from_quotes
from engine.answer.revisions import revision_answer, revisions_in
from engine.intent import parse_intent
from engine.records import Chunk, Passage
from engine.settings import AnswerSettings, PromptSettings
from tests.engine.scripted import ScriptedChat

RELEASE = ("Given our strong start to the year, we now expect full-year organic revenue to grow 7 percent (previously "
           "5 percent) and core constant currency EPS to increase 11 percent (previously 9 percent).\n\n"
           "We also raised our full-year free cash flow outlook to $6.2 billion from $5.8 billion, and lowered the "
           "capital spending outlook from $5.0 billion to $4.6 billion.")


def _passage(text: str) -> Passage:
    return Passage(Chunk(1, 1, "ACME_2023Q1_EARNINGS", 0, 0, len(text), "text", text, section="Release"),
                   "ACME earnings release 2023Q1")


def test_a_revision_is_read_with_what_was_revised_either_way_it_is_printed():
    got = {(r.words, r.new, r.old, r.percent) for r in revisions_in(" ".join(RELEASE.split()))}
    assert ("core constant currency EPS to increase 11 percent", 11.0, 9.0, True) in got
    assert any(w.endswith("organic revenue to grow 7 percent") and (n, o) == (7.0, 5.0) for w, n, o, _ in got)
    assert ("We also raised our full-year free cash flow outlook to $6.2 billion", 6.2e9, 5.8e9, False) in got
    assert ("lowered the capital spending outlook from $5.0 billion", 4.6e9, 5.0e9, False) in got
    # figures that are not one replacing the other: no revision
    assert revisions_in("Revenue grew 7 percent to $3.1 billion, and EPS rose 9 percent to $1.40.") == []


@pytest.mark.parametrize(("question", "asks"), [
    ("By how many percentage points did ACME raise its EPS growth guidance?", True),
    ("By how much did ACME lower its capital spending outlook in Q1 2023?", True),
    ("How much did ACME raise its free cash flow outlook by?", True),
    ("By how much did ACME's revenue grow in 2023?", False),  # (a change of a figure, not a revision of it)
    ("What EPS growth does ACME expect for 2023?", False),
])
def test_a_question_asking_a_revisions_size(question: str, asks: bool) -> None:
    assert bool(parse_intent(question).revised) is asks  # (the reader's reading, carried on the intent)


@pytest.mark.parametrize(("question", "answer", "value"), [
    ("By how many percentage points did ACME raise its core constant currency EPS growth guidance?",
     "Raised by 2 percentage points: 11 percent, previously 9 percent", 2.0),
    ("By how much did ACME raise its free cash flow outlook?", "Raised by $0.4 billion: $6.2 billion, previously "
     "$5.8 billion", 4e8),
    ("By how much did ACME cut its capital spending outlook?", "Lowered by $0.4 billion: $4.6 billion, previously "
     "$5.0 billion", -4e8),
])
def test_the_size_of_a_revision_is_computed_by_the_engine_without_a_model_call(question: str, answer: str,
                                                                              value: float) -> None:
    chat = ScriptedChat(lambda purpose, messages, n: pytest.fail("no model call: the engine computes a revision"))
    passage = _passage(RELEASE)
    intent = parse_intent(question)
    got = answer_from_quotes(question, intent, [passage], None, chat, AnswerSettings(),
                             PromptSettings(), decided=lambda quotes: revision_answer(intent, quotes, [passage]))
    a = got.result
    assert got.calls == () and a.method == "revision" and a.status == "answered"
    assert a.text.startswith(answer), a.text
    assert a.value == pytest.approx(value)
    quote = next(q for q in a.quotes if f"[{q.number}]" in a.text)
    assert answer.split(": ")[1].split(",")[0] in quote.text  # the quote cited prints the new figure


def test_a_revision_the_question_does_not_name_alone_is_left_to_the_written_answer():
    """"By how much did ACME raise its guidance": both guidance figures are raised, neither named more than the
    other; no figure is chosen for the analyst."""
    passage = _passage(RELEASE)
    chat = ScriptedChat(lambda purpose, messages, n: {"sentences": [
        {"text": "ACME raised its organic revenue and EPS growth guidance.", "quotes": [1]}], "insufficient": False})
    question = "By how much did ACME raise its full-year guidance?"
    intent = parse_intent(question)
    got = answer_from_quotes(question, intent, [passage], None, chat, AnswerSettings(),
                             PromptSettings(), decided=lambda quotes: revision_answer(intent, quotes, [passage]))
    assert got.result.method == "quotes" and len(got.calls) == 1


FACILITIES = [  # an 8-K's Item 1.01/8.01 as filers print it, cut into two chunks between the two agreements
    ("Effective May 26, 2023, Acme Corp. (“Acme”) terminated the $2,500,000,000 364 day unsecured revolving credit "
     "agreement, dated as of May 27, 2022, among Acme, as borrower, and the lenders party thereto. On May 26, 2023, "
     "Acme entered into a new $2,750,000,000 364 day unsecured revolving credit agreement (the “2023 364 Day Credit "
     "Agreement”) among Acme and the lenders. The 2023 364 Day Credit Agreement enables Acme to borrow up to "
     "$2,750,000,000 and may be increased to up to $3,000,000,000."),
    ("Effective May 26, 2023, Acme terminated the $3,000,000,000 five year unsecured revolving credit agreement, "
     "dated as of May 27, 2022. On May 26, 2023, Acme entered into a new $3,600,000,000 five year unsecured revolving "
     "credit agreement (the “2023 Five Year Credit Agreement”) among Acme and the lenders."),
]


@pytest.mark.parametrize(("question", "size", "value"), [
    ("By how much did Acme increase its unsecured five year revolving credit agreement on May 26, 2023?",
     "Raised by $600,000,000", 6e8),
    ("By how much did Acme increase its 364 day revolving credit facility agreement in May 2023?",
     "Raised by $250,000,000", 2.5e8),
])
def test_an_instrument_replaced_by_a_new_one_of_the_same_name_is_a_revision_of_its_amount(
        question: str, size: str, value: float) -> None:
    """"Terminated the $3.0 billion five year … agreement" and "entered into a new $3.6 billion five year …
    agreement", in two passages of one filing: by how much it was increased is computed by the engine, from the pair
    whose name the question's words name (not the 364-day one); no model call."""
    chat = ScriptedChat(lambda purpose, messages, n: pytest.fail("no model call: the engine computes a revision"))
    passages = [Passage(Chunk(i + 1, 1, "ACME_2023-05-30_8K", i, 2000 * i, 2000 * i + len(t), "text", t,
                              section="Item 8.01 Other Events"), "ACME 8-K") for i, t in enumerate(FACILITIES)]
    intent = parse_intent(question)
    got = answer_from_quotes(question, intent, passages, None, chat, AnswerSettings(), PromptSettings(),
                             decided=lambda quotes: revision_answer(intent, quotes, passages))
    a = got.result
    assert got.calls == () and a.method == "revision" and a.value == pytest.approx(value), a
    assert a.text.startswith(size), a.text
    cited = a.citations[0].page_index
    assert ("five year" in a.text) == (cited == 1), a.text
    vague = parse_intent("By how much did Acme increase its revolving credit agreements in May 2023?")
    assert revision_answer(vague, [], passages) is None  # (both agreements are named as well: no figure chosen)
