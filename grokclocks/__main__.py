"""`python -m grokclocks`: the `grokclocks` command (`grokclocks.cli`)."""

from .cli import main

raise SystemExit(main())
