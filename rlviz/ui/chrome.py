r"""Page chrome shared by every page: header, URL-bound controls, error boundary, panels.

A page reads like a description of its UI::

    with ui.page("gae", intro="...") as page:
        p = page.controls([ui.FloatSlider(name="lam", label="λ", min=0, max=1, value=0.9)])
        result = compute(p.lam)
        ui.chart(figures.weights(result))
        page.known_answer([ui.Check("λ = 0 equals δ", value=..., reference=..., tol=1e-12)])
        page.equations([("GAE", r"A_t = \sum_l (\gamma \lambda)^l \delta_{t+l}")])
        page.source(returns.gae)
        page.export(figures={"weights": fig}, data={"advantages": df}, settings=p)

Inside the ``with`` block an ``InputError`` (``rlviz.errors``: the library's way of saying "this
input makes no sense", in the user's terms) becomes a clear message at the top of the page.
Anything else, a plain ``ValueError`` included, is a bug: it is logged with its traceback on the
server and the user sees a short note, never a traceback. Streamlit's own control flow (``st.stop``,
``st.rerun``) passes through untouched.
"""

from __future__ import annotations

import functools
import inspect
import io
import json
import logging
import math
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from rlviz import __version__, interview
from rlviz.errors import InputError
from rlviz.ui import classroom, export, questions
from rlviz.ui.caching import RUN, handover
from rlviz.ui.catalog import PageInfo, page_info
from rlviz.ui.controls import Control, Params, Section
from rlviz.ui.navigation import favicon

__all__ = ["Check", "Page", "chart", "page"]

log = logging.getLogger("rlviz.ui")

PLOTLY_CONFIG = {
    # No floating toolbar: on a touch screen it stays up after a tap and covers the chart's
    # title and legend. Dragging still zooms, a double click resets, and the export panel
    # gives each figure as PNG and interactive HTML.
    "displayModeBar": False,
}
PANELS: dict[str, tuple[str, str]] = {
    "equations": ("The equations", ":material/function:"),
    "source": ("The code that ran", ":material/code:"),
    "export": ("Export", ":material/download:"),
    "questions": (questions.LABEL, ":material/school:"),
    "teacher": ("Make a teacher link", ":material/co_present:"),
}
"""The panels under a page, by name: label and icon."""
PANELS_KEY = "_panels"
"""Widget key (after the page's slug) of the row of panel toggles: the names of the open ones."""
PUBLIC_URL = "RLVIZ_PUBLIC_URL"
"""Environment variable: the address students reach the app at, for share links (for example
``https://rl.example.org/class``). Without it a link starts with the browser's own address."""
KEPT = "_rlviz.kept"
"""Session-state key: each page's control values, by page slug then control name, kept for the
session so that a page shows them again after a visit to another page."""
DOMAINS = "_rlviz.domains"
"""Session-state key: the range or options each control's widget was last drawn with, by
widget key (one entry, not one per control: Streamlit reads the whole session state for every
slider it draws)."""
FRIENDLY_ERROR = (
    "Something went wrong while drawing this view. The page still works: change a control or "
    "press **Reset to defaults** under *Share this view*. The problem has been logged."
)


def chart(fig: Any, *, key: str | None = None, height: int | None = None) -> None:
    """Show a plotly figure in the rlviz template (not Streamlit's theme).

    The figure is never changed (it may be shared through ``cached_figures``); a ``height``
    is applied to a copy.
    """
    page = getattr(RUN, "page", None)
    slide = page._classroom.chart(fig, height) if page is not None else None
    if slide is not None:  # presentation mode: one figure at a time, sized to the screen
        where, fig = slide
        if where is not None:
            where.plotly_chart(fig, theme=None, config=PLOTLY_CONFIG, key=key)
        return
    if height is not None and fig.layout.height != height:
        fig = go.Figure(fig).update_layout(height=height)
    st.plotly_chart(handover(fig), theme=None, config=PLOTLY_CONFIG, key=key)


@dataclass(frozen=True)
class Check:
    """One known-answer comparison: a live number against a textbook or paper value.

    Numeric checks pass when ``|value - reference| <= tol``. For other comparisons (a move in a
    set of optimal moves, one curve above another) give ``passed`` and text values.
    """

    label: str
    value: float | str
    reference: float | str
    tol: float = 0.0
    source: str = ""
    passed: bool | None = None
    fmt: str = ".4g"

    @property
    def ok(self) -> bool:
        if self.passed is not None:
            return bool(self.passed)
        try:
            value, ref = float(self.value), float(self.reference)
        except (TypeError, ValueError):
            return False
        return math.isfinite(value) and abs(value - ref) <= self.tol

    def _show(self, x: float | str) -> str:
        if isinstance(x, int | float | np.floating | np.integer):
            return format(float(x), self.fmt)
        return str(x)

    def row(self) -> str:
        mark = ":green[:material/check_circle:]" if self.ok else ":red[:material/cancel:]"
        tol = f"±{format(self.tol, '.2g')}" if self.passed is None else ""
        return (
            f"| {mark} | {self.label} | {self._show(self.value)} | {self._show(self.reference)} "
            f"| {tol} | {self.source} |"
        )


_MD_ACTIVE = set("\\`<>$")
_MD_PAIRS = {"](": "]\\(", "][": "]\\[", "]:": "]\\:", "![": "!\\["}


def escape_markdown(text: str) -> str:
    """Plain text that markdown shows as written: no links, images, autolinks, HTML or LaTeX.

    Backslashes, backticks, angle brackets and dollars are escaped; so are the bracket pairs
    that start a link or an image (a lone range such as ``[0, 1]`` stays readable); and URL
    schemes are broken with a zero-width space so that no bare address turns into a link.
    Emphasis and the like are left alone: harmless, and messages read better unescaped.
    """
    out = "".join("\\" + ch if ch in _MD_ACTIVE else ch for ch in str(text))
    for pair, escaped in _MD_PAIRS.items():
        out = out.replace(pair, escaped)
    return out.replace("://", ":\u200b//").replace("www.", "www\u200b.")


def _code_span(text: str, limit: int = 40) -> str:
    """Show untrusted text as inline code, shortened, with nothing that could end the span."""
    text = str(text).replace("`", "'").replace("\n", " ")
    return "`" + (text if len(text) <= limit else text[: limit - 1] + "…") + "`"


def _jsonable(x: Any) -> Any:
    if isinstance(x, Mapping):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return _jsonable(x.tolist())
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


_UNSET = object()

DECLARED: dict[str, dict[str, Control]] = {}
"""The controls each page declared on its latest run, by page slug then name (for tests)."""

SHOWN: dict[str, tuple[Callable | type, ...]] = {}
"""What each page's "The code that ran" panel showed on its latest run, by page slug (for the
test that proves every shown function was called by the computation)."""


def _one_torch_thread() -> None:
    """Serve torch pages with one intra-op thread per process.

    The pages' tensors are small, so a second thread only adds hand-off costs, and with several
    sessions on a 2-core machine threads from different runs fight over the same cores (a
    [3, 5] softmax measured 8 ms instead of microseconds under load). The library leaves the
    setting alone; it is the app's choice, made once torch is loaded.
    """
    global _torch_threads_set
    if _torch_threads_set:
        return
    torch = sys.modules.get("torch")
    if torch is None or getattr(getattr(torch, "__spec__", None), "_initializing", False):
        return  # not imported, or still being imported
    if torch.get_num_threads() != 1:
        torch.set_num_threads(1)
    _torch_threads_set = True


_torch_threads_set = False
"""Whether ``_one_torch_thread`` has set torch's threads (once per process: asking costs)."""


class Page:
    """The chrome of one page. Use through ``ui.page(slug, intro=...)``."""

    def __init__(
        self,
        slug: str,
        intro: str = "",
        heading: str | None = None,
        info: PageInfo | None = None,
        share: bool = True,
    ):
        self.info = info or page_info(slug)
        self.shareable = share
        self.slug = slug
        self.intro = intro
        self.heading = heading or self.info.title
        self._controls: dict[str, Control] = {}
        self._values: dict[str, Any] = {}
        self._notices: list[str] = []
        self._slot: Any = None
        self._top_box: Any = None
        self._share: Any = None
        self._busy: Any = None
        """The spinner under the control this run's user changed, while the run lasts."""
        self._loading: Any = None
        self._kept_values: dict[str, Any] | None = None
        self._url_synced = False
        self._panel_row: Any = None
        """Where the row of panel toggles goes (kept by the first panel of the run)."""
        self._panels: list[str] = []
        """The panels this run asked for, in order."""
        self._open: tuple[str, ...] = ()
        """The panels open in this run (read once, when the first panel asks)."""
        self._domains: dict[str, str] | None = None
        self._classroom: classroom.Classroom | None = None

    # ----------------------------------------------------------------- lifecycle
    def __enter__(self) -> Page:
        _one_torch_thread()
        self._classroom = classroom.Classroom(self)  # the teacher link's settings
        st.set_page_config(
            page_title=f"{self.info.title} · rlviz", page_icon=favicon(), layout="wide",
            initial_sidebar_state="collapsed" if self._classroom.present else "auto",
        )
        DECLARED[self.slug] = {}  # this run's controls only
        RUN.page, RUN.epoch = self, None
        with st.container(horizontal=True, vertical_alignment="center", gap="medium"):
            # presenting, the title leaves room for the figure's previous/next beside it
            st.title(self.heading, anchor=False,
                     width="content" if self._classroom.present else "stretch")
            self._classroom.title_row()  # presentation mode: the figure's previous/next
            if self.shareable:
                self._share = st.popover("Share this view", icon=":material/share:",
                                         key=self.key("_share"), on_change="rerun")
        self._classroom.start()
        if self.intro and self._classroom.text:
            st.markdown(self.intro)
        # On a session's first visit to the page, say at once that the view is on its way
        # (Streamlit's own spinners wait half a second); cleared when the page is drawn.
        first_visit = self.slug not in st.session_state.get(KEPT, {})
        self._kept()  # visited: a page without controls is drawn at once the next time
        # One slot under the intro: the loading note of a first visit, then the page's notices
        # and errors when it has any (one element a rerun, which is usually empty).
        self._slot = st.empty()
        if first_visit:
            self._loading = self._slot.status("Drawing this view…", state="running")
        return self

    @property
    def _top(self) -> Any:
        """Where notices and errors go, at the top of the page (replacing the loading note)."""
        if self._top_box is None:
            self._loading = None
            self._top_box = self._slot.container()
        return self._top_box

    def __exit__(self, exc_type, exc, tb) -> bool:
        RUN.page = None
        if self._busy is not None:
            self._busy.__exit__(None, None, None)
            self._busy = None
        if self._loading is not None:  # still showing: the view is drawn
            self._slot.empty()
            self._loading = None
        if exc is None and interview.for_page(self.slug):  # its interview questions, under it
            questions.panel(self.slug, self.settings, self._panel("questions"))
        handled = False
        if exc is not None and isinstance(exc, Exception):
            handled = True
            if isinstance(exc, InputError):
                self._top.error(escape_markdown(str(exc)), icon=":material/error:")
            else:
                log.error("page %s failed", self.slug, exc_info=(exc_type, exc, tb))
                self._top.error(FRIENDLY_ERROR, icon=":material/sentiment_dissatisfied:")
        try:
            self._finish_url()
        except Exception:  # the URL is a convenience; never let it break the page
            log.exception("could not update the URL of page %s", self.slug)
        return handled

    # ----------------------------------------------------------------- controls
    def key(self, name: str) -> str:
        """Session-state key of a control on this page."""
        return f"{self.slug}.{name}"

    def controls(
        self, spec: Sequence[Control | Section], *, container: Any = None
    ) -> Params:
        """Draw controls (in the sidebar unless ``container`` is given), bound to the URL.

        On a session's first visit to the page a control takes its value from the query string
        when that value is valid, and otherwise its default with a visible notice. Afterwards
        the widget is the source of truth and the URL follows it, listing only values that
        differ from the defaults, so a copied link restores the exact view. The values are kept
        for the session: after a visit to another page, this page and its URL show them again.

        Returns:
            The values of these controls by name.
        """
        where = container if container is not None else st.sidebar
        values: dict[str, Any] = {}
        with where:
            for item in spec:
                if isinstance(item, Section) and self._classroom.hides_all(item.controls):
                    for control in item.controls:  # a section whose controls are all hidden
                        values[control.name] = self._bind(control)
                elif isinstance(item, Section):
                    with st.expander(item.title, expanded=item.expanded):
                        for control in item.controls:
                            values[control.name] = self._bind(control)
                else:
                    values[item.name] = self._bind(item)
        if not self._url_synced:  # the page's first controls: the link follows them at once
            self._sync_url()
            self._url_synced = True
        self._show_notices()
        return Params(values)

    def _kept(self) -> dict[str, Any]:
        """This page's values kept for the session, in plain session state.

        Streamlit forgets the state of every widget a run did not draw, such as all the
        widgets of another page. Looked up once a run (each control asks).
        """
        if self._kept_values is None:
            kept = st.session_state.setdefault(KEPT, {})
            self._kept_values = kept.setdefault(self.slug, {})
        return self._kept_values

    def _bind(self, control: Control) -> Any:
        if control.name in self._controls:
            raise ValueError(f"control {control.name!r} is declared twice on this page")
        key = self.key(control.name)
        state = st.session_state
        kept = self._kept()
        if self._domains is None:
            self._domains = state.setdefault(DOMAINS, {})
        domains = self._domains
        domain = self._domain(control)
        try:
            current = state[key]
        except KeyError:
            current = _UNSET
        previous = kept.get(control.name, _UNSET)  # its value at the end of the last run
        same_domain = domains.get(key) == domain
        untouched = current  # the widget's state, unless this run sets it (below)
        if current is _UNSET:
            state[key] = self._initial(control, kept)
        elif not (same_domain and current == previous) and not self._valid(control, current):
            state[key], untouched = control.default, _UNSET  # (kept values were valid then)
        elif not same_domain:
            # A widget whose range changed (a scrubber over N items) is a new widget to
            # Streamlit, which would start it at its minimum: hand it the current value.
            state[key], untouched = current, _UNSET
        domains[key] = domain
        value = self._classroom.render(  # hidden or locked by a teacher link
            control, key, None if untouched is _UNSET else untouched)
        if (self._busy is None and previous is not _UNSET and previous != value
                and control.encode(previous) != control.encode(value)):
            # The person just changed this control: if the rest of the run takes more than
            # half a second, a spinner shows right under it (until the page is drawn).
            self._busy = st.spinner("Computing…", show_time=True)
            self._busy.__enter__()
        kept[control.name] = value
        self._controls[control.name] = control
        DECLARED[self.slug][control.name] = control
        self._values[control.name] = value
        return value

    def _initial(self, control: Control, kept: Mapping[str, Any]) -> Any:
        """A control's value when its widget has no state: link, session, else default."""
        raw = st.query_params.get(control.name)
        if raw is None:
            if control.name in kept and self._valid(control, kept[control.name]):
                return kept[control.name]
            return control.default
        try:
            return control.parse(raw)
        except ValueError as err:
            self._notices.append(
                f"The link's value {_code_span(f'{control.name}={raw}')} was ignored "
                f"({escape_markdown(str(err))}; expected {control.describe()}), "
                f"so **{control.label}** starts at its default."
            )
            return control.default

    @staticmethod
    def _domain(control: Control) -> str:
        """What a widget's identity depends on: its range or options, and its step."""
        return f"{control.describe()}|{getattr(control, 'step', '')}"

    @staticmethod
    def _valid(control: Control, value: Any) -> bool:
        try:
            control.parse(control.encode(value))
        except (ValueError, TypeError):
            return False
        return True

    def _url_values(self) -> dict[str, str]:
        # Compared as URL text, so a table with blank (NaN) cells still equals its default.
        encoded = {name: c.encode(self._values[name]) for name, c in self._controls.items()}
        return {
            name: text for name, text in encoded.items()
            if text != self._controls[name].encode(self._controls[name].default)
        }

    def _sync_url(self) -> dict[str, str]:
        """Write this run's control values into the link; returns the link's parameters."""
        current = st.query_params.to_dict()
        desired = {k: v for k, v in current.items()
                   if k not in self._controls and k not in classroom.RESERVED}
        desired.update(self._url_values())
        desired.update(self._classroom.query())
        if desired != current:
            st.query_params.from_dict(desired)
        return desired

    def _finish_url(self) -> None:
        # every control of the run, the later ones too, in the link
        current = self._sync_url() if self._controls else st.query_params.to_dict()
        unknown = [k for k in current if k not in self._controls and k not in classroom.RESERVED]
        if unknown and self._controls:
            names = ", ".join(_code_span(k, 24) for k in unknown[:5])
            self._notices.append(f"The link had parameters this page does not use ({names}).")
            st.query_params.from_dict({**self._url_values(), **self._classroom.query()})
        if self._controls:
            self._classroom.teacher_panel()
        self._classroom.finish(self._controls)
        self._notices += self._classroom.notices
        self._show_notices()
        self._share_panel()
        self._draw_panel_row()

    def _show_notices(self) -> None:
        if self._notices and self._slot is not None:
            for note in self._notices:
                self._top.warning(note, icon=":material/link_off:")
            self._notices = []

    def reset(self) -> None:
        """Forget this page's control values and its URL parameters."""
        for name in list(self._controls):
            st.session_state.pop(self.key(name), None)
        self._kept().clear()
        st.query_params.clear()

    def share_link(self, *, teacher: classroom.TeacherView | None = None) -> str:
        """The URL that restores this view, with its teacher settings (or ``teacher``'s).

        It starts with the public address in ``RLVIZ_PUBLIC_URL`` when that is set (a server
        reached as ``localhost`` still hands out links that work for others), else with the
        address in the browser.
        """
        public = os.environ.get(PUBLIC_URL, "").strip()
        if public:
            base = public.rstrip("/") + "/" + self.info.url_path
        else:
            base = (st.context.url or "").split("?")[0] or f"/{self.info.url_path}"
        if teacher is None:
            teacher = self._classroom.view if self._classroom else classroom.TeacherView()
        view = teacher
        query = urlencode({**self._url_values(), **view.query()}, safe=",")
        return f"{base}?{query}" if query else base

    def _share_panel(self) -> None:
        """The contents of "Share this view" beside the title: the link and a reset button.

        The box is drawn with the title and filled here, at the end of the run, while it is
        open: like the panels, its contents cost the reruns of a closed box nothing, and
        opening it reruns the page, which fills it with the link of the view as it is.
        """
        if self._share is None or not self._share.open:
            return
        with self._share:
            st.markdown("Anyone who opens this link sees this exact view:")
            st.code(self.share_link(), language=None, wrap_lines=True)
            self._classroom.share_box()
            st.button(
                "Reset to defaults", icon=":material/restart_alt:", key=self.key("_reset"),
                on_click=self.reset, width="stretch",
            )

    @property
    def settings(self) -> dict[str, Any]:
        """All control values so far."""
        return dict(self._values)

    # ----------------------------------------------------------------- panels
    def section(self, title: str) -> None:
        """A sub-heading inside the page body."""
        if self._classroom.section(title):
            return
        st.subheader(title, anchor=False)

    def read_it(self, markdown: str) -> None:
        """The "read it like this" explanation under the figures."""
        if not self._classroom.text:
            return
        with st.container(border=True):
            st.markdown(f"**Read it like this**\n\n{markdown}")

    def try_this(self, prompts: Iterable[str]) -> None:
        """Experiments for a class: predict first, then move the slider."""
        if not self._classroom.text:
            return
        numbered = "\n".join(f"{i}. {p}" for i, p in enumerate(prompts, start=1))
        with st.container(border=True):
            st.markdown(f"**Try this** — predict first, then move the slider\n\n{numbered}")

    def known_answer(self, checks: Sequence[Check], *, title: str = "Known answer") -> bool:
        """A badge comparing live numbers with their textbook or paper values.

        Returns:
            Whether every check passed.
        """
        ok = all(c.ok for c in checks)
        badge = (":green-badge[:material/check: matches]" if ok
                 else ":red-badge[:material/close: differs]")
        table = ["| | check | this run | reference | tolerance | source |",
                 "|---|---|---|---|---|---|", *(c.row() for c in checks)]
        with st.container(border=True):  # the badge in the title's line: no columns to send
            st.markdown(f"**{title}** &nbsp; {badge}")
            st.markdown("\n".join(table))
        return ok

    def _panel(self, name: str) -> Any | None:
        """The box to draw one of the page's panels into while it is open, else None.

        The panels (``PANELS``) are toggles in one row under the page, one widget a rerun
        however many panels the page has: the row is drawn at the end of the run, where the
        first panel asked for it, with the panels asked for; each open panel is a bordered box
        under it. Opening one reruns the page; closed, a panel costs its reruns nothing.
        """
        if self._panel_row is None:
            self._panel_row = st.empty()
            self._open = tuple(st.session_state.get(self.key(PANELS_KEY)) or ())
        self._panels.append(name)
        if name not in self._open:
            return None
        label, icon = PANELS[name]
        box = st.container(border=True)
        box.markdown(f"{icon} **{label}**")
        return box

    def _draw_panel_row(self) -> None:
        """The row of panel toggles, in the place the first panel kept for it."""
        if self._panel_row is None:
            return
        names = list(dict.fromkeys(self._panels))
        key = self.key(PANELS_KEY)
        if not set(self._open) <= set(names):  # a panel this run did not ask for
            st.session_state[key] = [n for n in self._open if n in names]
        self._panel_row.pills(
            "More on this view", names, selection_mode="multi", key=key,
            format_func=lambda n: f"{PANELS[n][1]} {PANELS[n][0]}",
            label_visibility="collapsed",
        )

    def equations(self, items: Sequence[tuple[str, str]]) -> None:
        """The equations behind the page, each with a one-line caption."""
        box = self._panel("equations")
        if box is None:
            return
        with box:
            for caption, latex in items:
                if caption:
                    st.markdown(caption)
                st.latex(latex)

    def source(self, *objects: Callable | type) -> None:
        """The exact rlviz source that produced this view (``inspect.getsource``).

        List the algorithm's readable step first, engine plumbing after. Every object shown must
        be called by the computation that drew the view: a test per page proves it.
        """
        SHOWN[self.slug] = tuple(objects)
        box = self._panel("source")
        if box is None:
            return
        with box:
            st.caption(
                "These are the rlviz functions this page called, read from the running code."
            )
            for obj in objects:
                name, code = _source_of(obj)
                st.markdown(f"`{name}`")
                st.code(code, language="python", line_numbers=True)

    def export(
        self,
        *,
        figures: Mapping[str, Any] | None = None,
        data: Mapping[str, Any] | Callable[[], Mapping[str, Any]] | None = None,
        settings: Mapping[str, Any] | None = None,
    ) -> None:
        """Download buttons: figures (HTML, PNG), data (CSV for tables, JSON otherwise), settings.

        The buttons are drawn only while the panel is open, and files are built only when their
        button is pressed. ``data`` may be a zero-argument callable returning the tables
        (``data=lambda: {...}``), so that they are assembled only when the panel is open.
        """
        box = self._panel("export")
        if box is None:
            return
        figures = dict(figures or {})
        data = dict((data() if callable(data) else data) or {})
        settings = dict(settings if settings is not None else self._values)
        with box:
            cols = st.columns(3)
            with cols[0]:
                st.markdown("**Figures**")
                png = export.available()
                for name, fig in figures.items():
                    st.download_button(
                        f"{name}.html", data=functools.partial(_figure_html, fig),
                        file_name=f"{self.slug}-{name}.html", mime="text/html",
                        on_click="ignore", key=self.key(f"_export.html.{name}"),
                        icon=":material/code:",
                    )
                    if png:
                        st.download_button(
                            f"{name}.png", data=functools.partial(export.figure_png, fig),
                            file_name=f"{self.slug}-{name}.png", mime="image/png",
                            on_click="ignore", key=self.key(f"_export.png.{name}"),
                            icon=":material/image:",
                        )
                if figures and png:
                    st.caption("A PNG is drawn on the server: its button shows a spinner "
                               "until the file is ready (the first takes a few seconds).")
                elif figures:
                    st.caption("PNG needs Chromium on the server; the HTML file has a camera "
                               "button that saves a PNG.")
            with cols[1]:
                st.markdown("**Data**")
                for name, table in data.items():
                    is_table = hasattr(table, "to_csv")
                    st.download_button(
                        f"{name}.{'csv' if is_table else 'json'}",
                        data=functools.partial(_data_bytes, table),
                        file_name=f"{self.slug}-{name}.{'csv' if is_table else 'json'}",
                        mime="text/csv" if is_table else "application/json",
                        on_click="ignore", key=self.key(f"_export.data.{name}"),
                        icon=":material/table:",
                    )
            with cols[2]:
                st.markdown("**Settings**")
                payload = {
                    "page": self.slug,
                    "rlviz": __version__,
                    "settings": settings,
                    "link": self.share_link() if self._controls else None,
                }
                st.download_button(
                    "settings.json",
                    data=functools.partial(_json_bytes, payload),
                    file_name=f"{self.slug}-settings.json", mime="application/json",
                    on_click="ignore", key=self.key("_export.settings"),
                    icon=":material/settings:",
                )


@functools.lru_cache(maxsize=512)
def _source_of(obj: Callable | type) -> tuple[str, str]:
    """Qualified name and source text of a function or class, read once per process.

    ``inspect.getsource`` of a class parses its whole module, which takes tens of milliseconds
    for a long module: too slow to repeat on every rerun of a page.
    """
    fn = inspect.unwrap(obj)
    return f"{fn.__module__}.{fn.__qualname__}", inspect.getsource(fn)


def _figure_html(fig: Any) -> str:
    return fig.to_html(include_plotlyjs=True, full_html=True)


def _json_bytes(payload: Any) -> bytes:
    return json.dumps(_jsonable(payload), indent=2, allow_nan=False).encode()


def _data_bytes(table: Any) -> bytes:
    if hasattr(table, "to_csv"):
        buf = io.StringIO()
        table.to_csv(buf, index=False)
        return buf.getvalue().encode()
    return _json_bytes(table)


def page(slug: str, *, intro: str = "", heading: str | None = None, share: bool = True) -> Page:
    """The chrome of the page ``slug`` (see ``rlviz.ui.catalog``), used as a context manager.

    Args:
        slug: The page's catalog entry.
        intro: Two sentences under the title: what this page shows.
        heading: Title to show instead of the catalog's.
        share: Whether the title has a "Share this view" box (a page with no controls to
            restore has nothing to share).
    """
    return Page(slug, intro=intro, heading=heading, share=share)
