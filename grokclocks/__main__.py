"""``python -m grokclocks``: the ``grokclocks`` command (:mod:`grokclocks.cli`)."""

from .cli import main

raise SystemExit(main())
