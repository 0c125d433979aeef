"""What a user's console shows: our warnings and errors by default; ``-v`` adds progress notes and the
warnings of the libraries we use, ``-vv`` everyone's debug lines.

Some libraries set their own loggers to DEBUG (bm25s does at import), and a record passes its own logger's
level, not the root's: so the level is set on the console handler, which every record reaches.
"""

from __future__ import annotations

import logging
import os
import sys
import warnings

_FORMAT = "%(levelname)s %(name)s: %(message)s"
_OURS = r"(engine|analyst_app)(\.|$)"


def configure_console(verbosity: int) -> None:
    """Set up logging and warnings for a command-line run or the app; ``verbosity`` counts ``-v``."""
    level = logging.WARNING if verbosity <= 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, "_filinglens_console", False)]:
        root.removeHandler(old)
    handler = logging.StreamHandler(sys.stderr)
    handler.setLevel(level)
    handler.setFormatter(logging.Formatter(_FORMAT))
    handler._filinglens_console = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(level)
    logging.captureWarnings(True)  # a warning shown is one log line, under the same level
    if verbosity <= 0:
        warnings.filterwarnings("ignore")
        warnings.filterwarnings("default", module=_OURS)
        _hide_model_loading_bars()


def _hide_model_loading_bars() -> None:
    """Hugging Face's progress bars ("Loading weights: 100%|…" each time the embedder or the reranker loads)
    are off unless the user asked for them (``HF_HUB_DISABLE_PROGRESS_BARS=0``). The variable is read when
    ``huggingface_hub`` is imported; an already imported one is told directly."""
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    if os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] != "1":
        return
    if "huggingface_hub" in sys.modules:
        from huggingface_hub.utils.tqdm import disable_progress_bars

        disable_progress_bars()
    if "transformers" in sys.modules:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
