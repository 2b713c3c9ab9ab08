"""``python -m explorer``: see explorer/cli.py."""

from .cli import main

raise SystemExit(main())
