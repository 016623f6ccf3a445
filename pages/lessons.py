import rlviz.ui.boot  # noqa: F401  (first: the heavy libraries, loaded once and in order)

from rlviz import ui
from rlviz.ui import classroom

INTRO = (
    "A lesson walks a class through several views: ask the room the step's question, open the "
    "view, let them argue, then reveal. Start from a ready lesson or build your own: on any "
    "page, *Make a teacher link* adds the view you see as the next step."
)

with ui.page("lessons", intro=INTRO, share=False) as page:
    classroom.lessons_page(page)
