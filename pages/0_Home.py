"""Home: what BPE is, a live miniature, and where to go next."""

from explorer.ui import home_view, nav

nav.enter_page()
home_view.home()
