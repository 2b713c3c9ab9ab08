"""Class: a teacher runs the lesson from the projector; students follow and guess the next merge."""

from explorer.ui import class_view, nav

nav.page(__file__)  # the prologue its line of nav.PAGES declares
class_view.class_page()
