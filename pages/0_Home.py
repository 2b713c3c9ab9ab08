"""Home: what BPE is, a live miniature, and where to go next."""

from explorer.ui import home_view, links, nav

nav.enter_page()
links.open_link(home_view.apply_params)  # a shared link or a refresh: rebuild the view it names
home_view.home()
links.keep_current(home_view.params())
