"""BPE Explorer: the entry point. The pages live in ``pages/``; the Home page and the navigation
in ``explorer/ui``."""

from explorer.ui import nav

nav.run_app()
