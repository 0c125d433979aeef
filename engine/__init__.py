"""FilingLens engine: everything that is not GUI.

Importing :mod:`engine` is cheap: heavy libraries (torch, llama_cpp, sentence_transformers) are
imported only inside the concrete model adapters, and PySide6 is never imported here.
"""

from __future__ import annotations

__version__ = "0.1.0"
