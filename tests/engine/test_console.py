"""What the console shows by default and with -v / -vv."""

from __future__ import annotations

import logging
import subprocess
import sys
import warnings

import pytest

from engine.console import configure_console

_SCRIPT = """
import logging, sys, warnings
from engine.console import configure_console
configure_console(int(sys.argv[1]))
noisy = logging.getLogger("bm25s")
noisy.setLevel(logging.DEBUG)          # as bm25s does at import
noisy.debug("Building index from IDs objects")
logging.getLogger("engine.x").info("progress note")
logging.getLogger("engine.x").warning("our warning")
exec(compile("import warnings; warnings.warn('fitz is deprecated', FutureWarning)", "pymupdf/x.py", "exec"),
     {"__name__": "pymupdf.x"})
"""


@pytest.mark.parametrize(("verbosity", "shown", "hidden"), [
    (0, ["our warning"], ["Building index", "progress note", "fitz is deprecated"]),
    (1, ["our warning", "progress note", "fitz is deprecated"], ["Building index"]),
    (2, ["our warning", "progress note", "fitz is deprecated", "Building index"], []),
])
def test_the_console_shows_our_warnings_by_default_and_more_with_v(verbosity: int, shown: list[str],
                                                                   hidden: list[str]) -> None:
    err = subprocess.run([sys.executable, "-c", _SCRIPT, str(verbosity)], capture_output=True, text=True,
                         check=True).stderr
    for text in shown:
        assert text in err, (verbosity, text, err)
    for text in hidden:
        assert text not in err, (verbosity, text, err)


def test_configuring_twice_keeps_one_console_handler() -> None:
    root = logging.getLogger()
    before = list(root.handlers)
    level = root.level
    try:
        with warnings.catch_warnings():
            configure_console(0)
            configure_console(1)
            ours = [h for h in root.handlers if getattr(h, "_filinglens_console", False)]
            assert len(ours) == 1 and ours[0].level == logging.INFO
    finally:
        for h in [h for h in root.handlers if h not in before]:
            root.removeHandler(h)
        root.setLevel(level)
        logging.captureWarnings(False)


_LOAD = """
import sys
from engine.console import configure_console
configure_console(int(sys.argv[1]))
from engine.models.registry import load_embedder
from engine.settings import Settings
load_embedder(Settings().models).embed_batch(["capital expenditure"])
"""


@pytest.mark.parametrize(("verbosity", "bars"), [(0, False), (1, True)])
def test_loading_the_embedder_shows_no_progress_bar_unless_asked(verbosity: int, bars: bool, monkeypatch) -> None:
    monkeypatch.delenv("HF_HUB_DISABLE_PROGRESS_BARS", raising=False)
    err = subprocess.run([sys.executable, "-c", _LOAD, str(verbosity)], capture_output=True, text=True,
                         check=True).stderr
    assert ("Loading weights" in err) is bars, err
