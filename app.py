"""BPE Explorer: the entry point. The pages live in ``pages/``; the Home page and the navigation
in ``explorer/ui``.

``streamlit run app.py`` finds ``app`` below and serves it: at server start it warms up (the
pages' code and the bundled tokenizer tables) so that a class's first visit does not wait. Each
browser session then runs this file as its script (as ``__main__``), which draws the page.
"""

import streamlit as st
from starlette.middleware import Middleware

from explorer.ui import assets, page_shell, startup

# every page's document carries a small script of the app's (explorer/ui/page_shell.py), and
# Streamlit's own code goes out compressed (explorer/ui/assets.py)
app = st.App(
    __file__,
    lifespan=startup.lifespan,
    routes=startup.ROUTES,
    middleware=[Middleware(page_shell.PageScriptMiddleware), Middleware(assets.CompressedAssetsMiddleware)],
)

if __name__ == "__main__":
    from explorer.ui import nav

    nav.run_app()
