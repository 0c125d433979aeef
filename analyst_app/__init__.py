"""FilingLens desktop application (PySide6). Thin: views, item models and workers over :mod:`engine`."""
