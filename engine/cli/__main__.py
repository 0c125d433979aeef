"""``python -m engine.cli``: the ``filinglens`` command line."""

import sys

from engine.cli import main

if __name__ == "__main__":
    sys.exit(main())
