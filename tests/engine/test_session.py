"""The Session: what a question loads, and when (a real demo library, the real embedder, no chat model)."""

from __future__ import annotations

from engine.records import DocumentsPayload
from engine.session import Session


def test_a_facts_answer_loads_no_model_and_opens_no_index_and_retrieval_loads_inside_its_run(
        ingested_demo, demo_truth) -> None:
    _, settings, _ = ingested_demo
    fact = next(f for f in demo_truth if f["form"] == "10-K" and f["metric"] == "Operating income"
                and f["fiscal_year_column"] == f["period"])
    said: list[str] = []
    with Session(settings, note=said.append, status=said.append) as session:
        pipeline = session.pipeline(chat=False)
        run = pipeline.run(f"What was {fact['company']}'s operating margin in fiscal {fact['period']}?")
        assert run.status == "answered" and run.answer.inputs
        # nothing was loaded for it: no embedder, no index, no retrieval stage built
        assert session._embedder is None and session._indexes is None and not pipeline.retrieval_ready
        assert not any(s.startswith("loading the") for s in said)

        run = pipeline.run(f"What does {fact['company']} say about competition?", stop_after="passages")
        documents = [t.payload for t in run.traces if isinstance(t.payload, DocumentsPayload)]
        assert pipeline.retrieval_ready and session._embedder is not None and session._indexes is not None
        assert documents[0].loaded.startswith("loaded the embedder and the indexes in ")
        assert "loading the embedder…" in said and "loading the indexes…" in said
        # the load is part of the run's time: the documents stage took at least what the load took
        load_s = float(documents[0].loaded.rsplit(" in ", 1)[1].split()[0])
        assert run.traces[[t.stage for t in run.traces].index("documents")].seconds >= load_s - 0.05
        # a second retrieving question loads nothing again
        again = pipeline.run(f"What does {fact['company']} say about its customers?", stop_after="passages")
        assert not next(t.payload for t in again.traces if isinstance(t.payload, DocumentsPayload)).loaded
