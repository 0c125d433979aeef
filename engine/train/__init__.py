"""Cross-encoder (reranker) training from pairs mined in the corpus (HiREC §4.1.2 recipe).

torch and sentence-transformers are imported only inside the training functions, so importing this
package stays cheap. Registering and loading a trained reranker is the model registry's job
(:mod:`engine.models.registry`).
"""

from __future__ import annotations

from engine.train.mining import MinedExample, MinedPassage, excluded_docs_from_questions, mine_pairs
from engine.train.trainer import (
    RankMetrics,
    TrainReport,
    resolve_device,
    train_reranker,
)

__all__ = [
    "MinedExample", "MinedPassage", "RankMetrics", "TrainReport", "excluded_docs_from_questions", "mine_pairs",
    "resolve_device", "train_reranker",
]
