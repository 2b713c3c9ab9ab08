"""Where the app's own files are: ``app.py``, ``pages/``, ``sample_corpora/`` and ``.streamlit/``.

In a checkout they sit beside the ``explorer`` package. ``pip install .`` puts a copy of them in
``<prefix>/share/bpe-explorer`` (the project's data files), so that the installed
``bpe-explorer app`` serves the same app from any folder.

>>> (app_root() / "app.py").is_file() and (app_root() / "sample_corpora").is_dir()
True
"""

from __future__ import annotations

import site
import sys
from pathlib import Path

__all__ = ["PACKAGE", "SHARED", "app_root"]

PACKAGE = Path(__file__).resolve().parent
SHARED = Path("share") / "bpe-explorer"  # where an installation keeps the app's files, under a prefix


def app_root() -> Path:
    """The folder holding ``app.py``: the checkout when ``explorer/`` sits in one, else the
    installed copy: under the prefix the package was installed in (``<prefix>/lib/pythonX.Y/
    site-packages/explorer``, or ``<prefix>/Lib/site-packages/explorer`` on Windows), this
    interpreter's prefix, its base prefix or the user's base."""
    checkout = PACKAGE.parent
    if (checkout / "app.py").is_file():
        return checkout
    prefixes = (
        PACKAGE.parents[3],
        PACKAGE.parents[2],
        sys.prefix,
        sys.base_prefix,
        getattr(site, "USER_BASE", None) or "",
    )
    for prefix in filter(None, prefixes):
        candidate = Path(prefix) / SHARED
        if (candidate / "app.py").is_file():
            return candidate
    return checkout
