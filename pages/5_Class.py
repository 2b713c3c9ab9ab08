"""Class: a teacher runs the lesson from the projector; students follow and guess the next merge."""

from explorer.ui import class_view, nav, state

nav.enter_page()
state.keep_widget_state()
class_view.class_page()
