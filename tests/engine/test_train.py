"""Reranker training: pairs mined from the demo corpus, a real (small) CPU training run, save/load, resume.

One training run is shared by the module (it is the slow part): it is interrupted after a few steps
through ``cancel`` and resumed, so the same run checks checkpointing, resuming, the improvement over
the untrained head, and the saved model.
"""

from __future__ import annotations

import contextlib

import json
from pathlib import Path
import re
from collections import Counter

import numpy as np
import pytest

from engine.errors import EngineError
from engine.retrieval.hierarchical import filing_title
from engine.train.mining import (
    HELDOUT,
    KIND_NARRATIVE,
    KIND_TABLE,
    NEG_NEAR_DUPLICATE,
    TRAIN,
    excluded_docs_from_questions,
    mine_pairs,
    parse_row,
    read_examples,
)

N_MINED = 300
HOLDOUT = 0.25  # 2 of the 8 demo filings
N_TRAIN, N_EVAL = 16, 12  # examples; 9 pairs each (1 positive + 8 negatives)
CANCEL_AT = 4


def _numbers(text: str) -> set[str]:
    return {n.replace(",", "").rstrip(".") for n in re.findall(r"\d[\d,]*(?:\.\d+)?", text)}


@pytest.fixture(scope="module")
def mined(ingested_demo):
    library, settings, _ = ingested_demo
    return mine_pairs(library, settings, n_pairs=N_MINED, seed=0, holdout=HOLDOUT)


# -- mining ----------------------------------------------------------------------------------------


def test_parse_row_reads_dot_leader_and_two_space_rows():
    assert parse_row("Total revenue ................................. $ 6,776 $ 6,441") == (
        "Total revenue", ["6,776", "6,441"])
    assert parse_row("Capital expenditures  (410)  (249)") == ("Capital expenditures", ["(410)", "(249)"])
    assert parse_row("Item 1.  Business  3") is None
    assert parse_row("Our revenue grew 5% in 2022 as demand rose") is None


def test_mined_pairs_follow_the_hirec_recipe(ingested_demo, mined):
    library, _, _ = ingested_demo
    filings = {f.id: f for f in library.filings()}
    assert len(mined) >= 200, f"only {len(mined)} examples from the demo corpus"
    kinds = Counter(e.kind for e in mined)
    assert kinds[KIND_TABLE] > 0 and kinds[KIND_NARRATIVE] > 0, kinds
    print(f"\nmined {len(mined)} examples: {dict(kinds)}, splits {dict(Counter(e.split for e in mined))}, "
          f"negatives {dict(Counter(s for e in mined for s in e.negative_sources))}")
    for e in mined:
        assert len(e.negatives) == 8 and len(e.negative_sources) == 8
        chunk = library.chunks([e.positive.chunk_id])[0]
        # The positive is what the pipeline scores: filing title, then the chunk with its table context.
        assert e.positive.text == f"{filing_title(filings[chunk.filing_id])}\n{chunk.indexed_text}"
        assert (e.positive.doc_name, e.positive.page) == (chunk.doc_name, chunk.page_index)
        assert e.answer.replace(",", "") in _numbers(chunk.indexed_text), (e.query, e.answer)
        assert len({n.chunk_id for n in e.negatives} | {e.positive.chunk_id}) == 9
        for n in e.negatives:
            assert (n.doc_name, n.page) != (e.positive.doc_name, e.positive.page), "negative on evidence page"
            # A chunk that states the answer (next year's prior-year column, the MD&A restating a table) is
            # a correct passage, never a negative.
            assert e.answer.replace(",", "") not in _numbers(n.text), (e.query, n.doc_name, n.page)
        for n, source in zip(e.negatives, e.negative_sources):
            if source == NEG_NEAR_DUPLICATE:
                assert n.doc_name != e.positive.doc_name
    assert sum(s == NEG_NEAR_DUPLICATE for e in mined for s in e.negative_sources) > len(mined)


def test_table_questions_name_metric_issuer_and_period(ingested_demo, mined):
    library, _, _ = ingested_demo
    by_doc = {f.identity.doc_name: f.identity for f in library.filings()}
    table = [e for e in mined if e.kind == KIND_TABLE]
    for e in table:
        ident = by_doc[e.positive.doc_name]
        short = re.sub(r"[, ]+(Inc|Corp)\.?$", "", ident.registrant)
        names = {ident.registrant, ident.ticker, ident.issuer_key, short}
        assert any(n and n in e.query for n in names), e.query
        assert re.search(r"\b20\d\d\b", e.query), e.query
    assert any("revenue" in e.query.lower() for e in table), "no revenue question from the income statements"
    assert any("fiscal" in e.query for e in table) and any("months ended" in e.query for e in table)
    assert any(e.query.startswith("According to its") and "statements of" in e.query for e in table)


def test_split_is_by_filing(mined):
    docs = {split: set() for split in (TRAIN, HELDOUT)}
    for e in mined:
        docs[e.split].update([e.positive.doc_name, *(n.doc_name for n in e.negatives)])
    assert docs[TRAIN] and docs[HELDOUT]
    assert not docs[TRAIN] & docs[HELDOUT], "an evaluation pair shares a filing with a training pair"
    assert len(docs[HELDOUT]) == 2


def test_mining_is_deterministic(ingested_demo, mined):
    library, settings, _ = ingested_demo
    first = mine_pairs(library, settings, n_pairs=40, seed=0, holdout=HOLDOUT)
    assert mine_pairs(library, settings, n_pairs=40, seed=0, holdout=HOLDOUT) == first
    other = mine_pairs(library, settings, n_pairs=40, seed=1, holdout=HOLDOUT)
    assert [e.query for e in other] != [e.query for e in first]


def test_excluded_eval_filings_contribute_nothing(ingested_demo, tmp_path):
    library, settings, _ = ingested_demo
    questions = tmp_path / "eval.jsonl"
    rows = [
        {"question": "What was total revenue in 2022?", "answer": "6,776", "doc_name": "HRBR_2022_10K"},
        {"question": "Net income in Q2 2022?", "gold_pages": [{"doc_name": "KNGS_2022Q2_10Q", "page": 3}]},
    ]
    questions.write_text("".join(json.dumps(r) + "\n" for r in rows))
    excluded = excluded_docs_from_questions(questions, library)
    assert excluded == {"HRBR_2022_10K", "KNGS_2022Q2_10Q"}
    examples = mine_pairs(library, settings, n_pairs=120, seed=0, holdout=HOLDOUT, exclude_docs=excluded)
    assert examples
    used = {d for e in examples for d in [e.positive.doc_name, *(n.doc_name for n in e.negatives)]}
    assert not used & excluded
    assert len(used) == 6


# -- device ----------------------------------------------------------------------------------------


def test_device_selection(ingested_demo, tmp_path):
    torch = pytest.importorskip("torch")
    from engine.train.trainer import resolve_device, train_reranker

    if torch.cuda.is_available():
        assert resolve_device("auto") == "cuda"
        return
    assert resolve_device("auto") == "cpu"
    assert resolve_device("cpu") == "cpu"
    with pytest.raises(EngineError, match="cuda"):
        resolve_device("cuda")
    library, settings, _ = ingested_demo
    with pytest.raises(EngineError, match="no CUDA device"):
        train_reranker(library, settings, tmp_path / "run", pairs=10, device="cuda")
    with pytest.raises(EngineError, match="unknown device"):
        resolve_device("tpu")


# -- training (one real run, interrupted and resumed) ----------------------------------------------


@pytest.fixture(scope="module")
def trained(ingested_demo, mined, tmp_path_factory):
    torch = pytest.importorskip("torch")
    pytest.importorskip("sentence_transformers")
    from engine.train.trainer import CHECKPOINT_DIR, train_reranker

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the suite shares two cores with other work
    train = [e for e in mined if e.split == TRAIN][:N_TRAIN]
    heldout = [e for e in mined if e.split == HELDOUT][:N_EVAL]
    out = tmp_path_factory.mktemp("reranker")
    kwargs = dict(pairs=train + heldout, epochs=1, device="auto", max_length=128, batch_size=18, lr=1e-4,
                  head_lr=5e-3, pos_weight=8.0, checkpoint_every=CANCEL_AT, seed=0)
    seen: list[tuple[int, int]] = []
    first = train_reranker(None, None, out, **kwargs, progress=lambda s, t, eta: seen.append((s, t)),
                           cancel=lambda: bool(seen) and seen[-1][0] >= CANCEL_AT)
    checkpoint_exists = (out / CHECKPOINT_DIR / "state.pt").exists()
    resumed_seen: list[tuple[int, int]] = []
    second = train_reranker(None, None, out, **kwargs, progress=lambda s, t, eta: resumed_seen.append((s, t)))
    torch.set_num_threads(threads)
    return {"out": out, "first": first, "second": second, "checkpoint_existed": checkpoint_exists,
            "seen": seen, "resumed_seen": resumed_seen, "heldout": heldout, "train": train}


@pytest.mark.slow
def test_resume_continues_at_the_saved_step(trained):
    first, second = trained["first"], trained["second"]
    assert not first.completed and first.model_dir is None and first.after is None
    assert first.steps_done == CANCEL_AT and trained["checkpoint_existed"]
    assert second.completed and second.resumed_from_step == CANCEL_AT
    assert trained["resumed_seen"][0][0] == CANCEL_AT + 1, "the resumed run repeated or skipped steps"
    assert second.steps_done == second.total_steps == trained["resumed_seen"][-1][0]
    assert second.before == first.before  # the untrained baseline is kept in the checkpoint
    assert not (trained["out"] / "checkpoint").exists(), "a finished run leaves no checkpoint behind"


@pytest.mark.slow
def test_training_beats_the_untrained_head(trained):
    r = trained["second"]
    print(f"\nheld-out ({r.eval_examples} examples, 1 positive vs 8 hard negatives): "
          f"hit@1 {r.before.hit_at_1:.3f} -> {r.after.hit_at_1:.3f}, "
          f"MRR {r.before.mrr:.3f} -> {r.after.mrr:.3f}, "
          f"mean rank {r.before.mean_rank:.2f} -> {r.after.mean_rank:.2f}; trained on {r.train_pairs} pairs, "
          f"{r.seconds_per_epoch:.1f}s/epoch, {r.train_pairs_per_s:.1f} pairs/s training, "
          f"{r.infer_pairs_per_s:.1f} pairs/s scoring ({r.device})")
    # An untrained head ranks at random (MRR ~0.31 for 9 passages); 16 questions already teach it a lot.
    assert r.after.mrr > r.before.mrr + 0.1
    assert r.after.hit_at_1 > r.before.hit_at_1
    assert r.after.mean_rank < r.before.mean_rank
    assert r.device == "cpu" and r.train_examples == N_TRAIN and r.eval_examples == N_EVAL


@pytest.mark.slow
def test_saved_model_and_report_round_trip(trained, tmp_path):
    from engine.models.cross import SentenceTransformerCrossScorer
    from engine.models.embedder import weights_fingerprint
    from engine.models.registry import load_registered_reranker, register_reranker
    from engine.train.trainer import rank_metrics

    out, r = trained["out"], trained["second"]
    meta = json.loads((out / "reranker.json").read_text())
    assert meta["base_model"].startswith("sentence-transformers/all-MiniLM-L6-v2@")
    assert meta["fingerprint"] == r.fingerprint == weights_fingerprint(out / "model")
    assert meta["fingerprint"] != meta["base_fingerprint"]
    assert meta["metrics"]["after"]["mrr"] == pytest.approx(r.after.mrr)
    assert meta["pairs"]["train_pairs"] == N_TRAIN * 9 and meta["pairs"]["negatives_per_positive"] == 8
    assert set(meta["timing"]) == {"seconds_per_epoch", "train_pairs_per_s", "infer_pairs_per_s"}
    assert len(read_examples(out / "pairs.jsonl")) == N_TRAIN + N_EVAL

    # The registered model, loaded as the pipeline loads its CrossScorer, ranks the held-out examples
    # exactly as the run's final evaluation did.
    home = tmp_path / "lib"
    assert load_registered_reranker(home, "cpu") is None
    register_reranker(home, out)
    loaded = load_registered_reranker(home, "cpu", max_length=128)
    assert isinstance(loaded, SentenceTransformerCrossScorer) and loaded.folder == r.model_dir
    assert loaded.fingerprint == r.fingerprint
    some = trained["heldout"][:4]
    pairs = [(e.query, p.text) for e in some for p in (e.positive, *e.negatives)]
    scores = loaded.score_pairs(pairs)
    assert rank_metrics(some, scores).ranks == r.after.ranks[:4]
    again = SentenceTransformerCrossScorer(out / "model", device="cpu", max_length=128).score_pairs(pairs[:9])
    np.testing.assert_allclose(again, scores[:9], rtol=1e-5, atol=1e-5)


def test_register_rejects_a_folder_that_is_not_a_model(tmp_path):
    from engine.errors import ModelError
    from engine.models.registry import register_reranker

    with pytest.raises(ModelError, match="not a trained reranker"):
        register_reranker(tmp_path / "lib", tmp_path)


def test_statement_titles_are_title_lines_not_sentences():
    from engine.train.mining import statement_title

    assert statement_title("CONSOLIDATED STATEMENTS OF CASH FLOWS") == "consolidated statements of cash flows"
    assert statement_title("Condensed Consolidated Balance Sheets (Unaudited)") == "condensed consolidated balance sheets"
    assert statement_title("Consolidated Statements of Shareholders’ Equity") == \
        "consolidated statements of shareholders’ equity"
    assert statement_title("operating outflow on the consolidated statements of cash flows.") is None
    assert statement_title("See the statements of operations for details.") is None


def test_narrative_facts_keep_the_companys_figure_and_skip_qualified_ones(ingested_demo):
    from engine.records import Chunk
    from engine.train.mining import _narrative_facts

    library, _, _ = ingested_demo
    filing = library.filings()[0]

    def facts(text: str) -> list[tuple[str, str, str]]:
        chunk = Chunk(1, filing.id, filing.identity.doc_name, 0, 0, len(text), "text", text)
        return [(f.metric, f.period, f.answer) for f in _narrative_facts(chunk, filing)]

    assert facts("Interest expense was $841 million in 2017, compared with $733 million in 2016.") == [
        ("interest expense", "in 2017", "841")]
    assert [f[0::2] for f in facts("During fiscal 2021, cash provided by operations was $2,983 million.")] == [
        ("cash from operations", "2,983")]
    for qualified in (
        "We recorded deferred revenue of $1,070 million in 2020.",  # another metric than revenue
        "Total net revenue increased by $441.6 million in 2016.",  # a change, not the figure
        "Sam's Club had net sales of $63.9 billion in 2021.",  # a segment's figure
        "The Business segment's revenues were $31.0 billion in 2021.",
        "We expect restructuring charges of approximately $150 million in 2019.",
        "The board raised the dividend from $0.22 to $0.24 per share in 2020.",
        "Long-term debt $ 179,048 $ (15,722) $ 6,182 in 2022.",  # table cells run together
    ):
        assert facts(qualified) == [], qualified


def test_table_row_synonyms_only_for_labels_that_are_the_metric():
    from engine.intent import find_metrics, metric_named_by

    assert metric_named_by("Net sales") == "revenue"
    assert metric_named_by("Purchases of property, plant and equipment") == "capital expenditures"
    assert metric_named_by("Other non-current assets") is None
    assert metric_named_by("Revenue from leases") is None
    assert find_metrics("Other non-current assets") == ()
    assert find_metrics("Total current assets") == ("current assets",)


# -- questions written by the chat model -------------------------------------------------------------


class _Writer:
    """A chat model that words the fact it is given as a question (or returns a fixed reply)."""

    model_id = "writer"

    def __init__(self, reply: str | None = None) -> None:
        self.reply, self.calls = reply, 0

    def prefix_session(self):  # noqa: ANN201
        return contextlib.nullcontext()

    def complete_json(self, messages, schema, *, max_tokens=512, cancel=None):  # noqa: ANN001, ANN201
        from engine.models.base import ChatResult

        self.calls += 1
        fields = dict(line.split(": ", 1) for line in messages[-1]["content"].splitlines() if ": " in line)
        q = self.reply or f"Analyst view: how much {fields['Line item'].lower()} did {fields['Company']} book " \
                          f"{fields['Period']}?"
        return ChatResult({"question": q}, json.dumps({"question": q}), 50, 12, 1, 0.01, self.model_id, ())


def test_written_questions_must_ask_for_the_fact():
    from engine.train.mining import write_question

    def ask(reply: str) -> tuple[str | None, str]:
        return write_question("Purchases of property, plant and equipment", "in fiscal 2018", "1,577",
                              "3M Company", "Purchases of property, plant and equipment  (1,577)  (1,373)",
                              _Writer(reply))

    assert ask("How much did 3M spend on capital expenditures in fiscal 2018?")[0] is not None
    for bad, why in (("How much did 3M spend on capital expenditures in 2017?", "period"),
                     ("Did 3M spend 1,577 on capital expenditures in 2018?", "answer away"),
                     ("How much did the company spend on capital expenditures in 2018?", "name"),
                     ("What was 3M's revenue in 2018?", "ask for"),
                     ("capital expenditures 3M 2018", "not a question")):
        q, reason = ask(bad)
        assert q is None and why in reason, (bad, reason)


def test_mining_uses_written_questions_for_its_share(ingested_demo, mined):
    library, settings, _ = ingested_demo
    writer = _Writer()
    written = mine_pairs(library, settings, n_pairs=20, seed=0, holdout=HOLDOUT, writer=writer, llm_share=1.0)
    assert writer.calls == len(written) == 20
    assert all(e.question_source == "llm" and e.query.startswith("Analyst view") for e in written)
    # The facts, evidence and negatives are the template's: only the wording changed.
    plain = {(e.positive.chunk_id, e.answer): e for e in mine_pairs(library, settings, n_pairs=20, seed=0,
                                                                      holdout=HOLDOUT)}
    same = [e for e in written if (e.positive.chunk_id, e.answer) in plain]
    assert same and all(e.negatives == plain[(e.positive.chunk_id, e.answer)].negatives for e in same)
    with pytest.raises(EngineError, match="llm_share"):
        mine_pairs(library, settings, n_pairs=5, writer=writer, llm_share=1.5)


@pytest.mark.slow
def test_smollm2_writes_or_is_refused(ingested_demo, tmp_path):
    """The real path: SmolLM2 is asked for every question; what it writes is kept only if it passes."""
    from engine.models import registry
    from engine.settings import ModelSettings

    pytest.importorskip("llama_cpp")
    library, settings, _ = ingested_demo
    chat = registry.load_chat_model(ModelSettings(chat_model="smollm2-135m", n_ctx=1024, threads=2, json_retries=0),
                                    tmp_path)
    calls = []
    real = chat.complete_json

    def counted(*a, **k):  # noqa: ANN002, ANN003, ANN202
        calls.append(1)
        return real(*a, **k)

    chat.complete_json = counted
    examples = mine_pairs(library, settings, n_pairs=3, seed=1, holdout=HOLDOUT, writer=chat, llm_share=1.0)
    assert len(examples) == 3 and len(calls) == 3
    plain = mine_pairs(library, settings, n_pairs=3, seed=1, holdout=HOLDOUT)  # the same facts, template wording
    assert [(e.positive.chunk_id, e.answer) for e in examples] == [(p.positive.chunk_id, p.answer) for p in plain]
    for e, p in zip(examples, plain):  # each question is the model's (it passed the checks) or the template's
        if e.question_source == "llm":
            assert e.query != p.query and e.query.endswith("?") and e.answer.replace(",", "") not in _numbers(e.query)
        else:
            assert e.question_source == "template" and e.query == p.query


class _Saver:
    """Stands in for a CrossEncoder's ``save``: writes a weights file and a config."""

    def __init__(self, weights: bytes) -> None:
        self.weights = weights

    def save(self, folder: str, create_model_card: bool = False) -> None:
        Path(folder).mkdir(parents=True)
        (Path(folder) / "config.json").write_text("{}")
        (Path(folder) / "model.safetensors").write_bytes(self.weights)


def test_a_new_training_never_changes_the_registered_weights_and_superseded_versions_go(tmp_path):
    from engine.models.embedder import weights_fingerprint
    from engine.models.registry import register_reranker, registered_reranker_folder
    from engine.train.trainer import _publish_model

    home, out = tmp_path / "lib", tmp_path / "lib" / "models" / "reranker-trained"
    out.mkdir(parents=True)
    (out / "model").mkdir()  # a run folder written before versions: its plain model folder is kept as one
    _Saver(b"legacy").save(str(out / "model" / "x"))
    legacy_fp = weights_fingerprint(out / "model")
    first = _publish_model(_Saver(b"first"), out)
    assert (out / "model").is_symlink() and (out / "model").resolve() == first.resolve()
    assert (out / f"model-{legacy_fp[:12]}").is_dir()
    register_reranker(home, out)
    entry = json.loads((home / "models" / "reranker.json").read_text())
    assert Path(entry["folder"]) == first.resolve() and entry["fingerprint"] == weights_fingerprint(first)
    assert not (out / f"model-{legacy_fp[:12]}").exists()  # superseded and not registered: pruned

    second = _publish_model(_Saver(b"second"), out)  # e.g. `train-reranker --no-register`, or killed before it
    assert (out / "model").resolve() == second.resolve() != first.resolve()
    assert registered_reranker_folder(home) == first.resolve()
    assert weights_fingerprint(first) == entry["fingerprint"]  # the registered weights are untouched
    assert _publish_model(_Saver(b"second"), out) == second  # the same weights again: the same version
    register_reranker(home, out / "model")
    assert registered_reranker_folder(home) == second.resolve() and not first.exists()
    assert sorted(p.name for p in out.iterdir()) == ["model", second.name]
