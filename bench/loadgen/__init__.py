"""The load generator behind ``bench/load.py``, one module per part:

- ``client``: one browser tab's worth of Streamlit's protocol over its websocket (connect,
  reruns, widget states, the message cache, the deltas read);
- ``specs``: what each Train session opens, and the engine alone's merges for it;
- ``servers``: the servers under test (started through the launcher, their memory and CPU);
- ``control``: bounded runs (deadlines, the watchdog, the browsers' process);
- ``report``: the numbers' summaries and the closing lines every run prints;
- ``browsers``: headless Chromium alongside, in a process of its own;
- ``sessions``: the sessions run (many Train pages stepping at once);
- ``class_client`` and ``classroom``: the Class page's run (one teacher, a room of students).

``bench/load.py`` parses the command line and hands over to a scenario's ``main``.
"""

from __future__ import annotations

import sys

from _common import ROOT

# the test helpers (a served app, Debian's chromium) are shared with the test suite
if str(ROOT / "tests") not in sys.path:
    sys.path.insert(0, str(ROOT / "tests"))

__all__: list[str] = []
