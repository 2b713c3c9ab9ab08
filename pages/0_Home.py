"""Home: what BPE is, a live miniature, and where to go next."""

from explorer.ui import home_view, links, nav

nav.page(__file__)  # the prologue its line of nav.PAGES declares
home_view.home()
links.keep_current(home_view.params())
