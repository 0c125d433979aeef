"""Cross-encoder (reranker) training from pairs mined in the corpus (HiREC §4.1.2 recipe).

torch and sentence-transformers are imported only inside the training functions, so importing this
package stays cheap.
"""

from __future__ import annotations

from engine.train.mining import MinedExample, MinedPassage, excluded_docs_from_questions, mine_pairs
from engine.train.trainer import (
    RankMetrics,
    TrainReport,
    default_run_dir,
    load_registered_reranker,
    register_reranker,
    registry_path,
    resolve_device,
    train_reranker,
)

__all__ = [
    "MinedExample", "MinedPassage", "RankMetrics", "TrainReport", "default_run_dir", "excluded_docs_from_questions",
    "load_registered_reranker", "mine_pairs", "register_reranker", "registry_path", "resolve_device", "train_reranker",
]
