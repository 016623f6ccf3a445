"""The interview question bank: one entry per question, each opening the live view that answers it.

A question is data: its topic and difficulty, a short answer in a few points, and one or more
links to a page with the exact settings that show the answer. Each family keeps its questions
in a module of its own (``rlviz.interview.<page slug>``, or ``fundamentals`` for the questions
that belong to no single page), as a tuple ``QUESTIONS``; :func:`bank` gathers them all.

Where an answer quotes a number, the number is computed by ``rlviz`` when the answer is shown:
write ``{name}`` in the text and give ``numbers``, a zero-argument function returning the
formatted values (``{"p_star": "0.5858"}``). The text never hard-codes a number the library can
compute.

A family's *whiteboard version* is the ~10-line numpy answer a candidate would write at a
whiteboard (the update, the loss, the projection); it lives in ``rlviz.interview.whiteboard``
beside a test, and a live check on the page, that it equals ``rlviz`` on the current view:
one module per family, ``rlviz.interview.whiteboard.<page slug>``.

This package imports nothing heavy: ``numbers`` functions import what they need when called.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from urllib.parse import urlencode

__all__ = ["DIFFICULTIES", "TOPICS", "Link", "Prediction", "Question", "bank", "for_page"]

TOPICS = (
    "MDPs and Bellman equations",
    "Dynamic programming",
    "TD learning",
    "On- vs off-policy",
    "Bias and variance",
    "Exploration",
    "Bandits",
    "Policy gradients",
    "Planning and search",
    "Distributional RL",
    "Offline RL",
    "Function approximation",
    "RLHF and LLMs",
)
"""Every question has one of these topics (the drill's topic filter)."""

DIFFICULTIES = {1: "warm-up", 2: "core", 3: "deep"}
"""Difficulty levels and their names."""


@dataclass(frozen=True)
class Link:
    """A page view that shows an answer: the page's slug and the URL values of its controls.

    ``query`` holds control names and their URL text exactly as the page's controls encode them
    (what a copied link would carry); controls not named keep their defaults.
    """

    page: str
    query: Mapping[str, str] = field(default_factory=dict)
    shows: str = ""
    """What to look at once the view opens (one sentence)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "query", MappingProxyType(dict(self.query)))

    @property
    def url(self) -> str:
        """The link as a path with its query string, e.g. ``/cliff_td?epsilon=0.01``."""
        query = urlencode(dict(self.query), safe=",")
        return f"/{self.page}?{query}" if query else f"/{self.page}"


@dataclass(frozen=True)
class Prediction:
    """A question the user can commit to before the reveal ("which curve ends higher?")."""

    prompt: str
    options: tuple[str, ...]
    answer: int
    """Index of the right option."""

    def __post_init__(self) -> None:
        if not 0 <= self.answer < len(self.options):
            raise ValueError(f"prediction answer {self.answer} is not an option index")


@dataclass(frozen=True)
class Question:
    """One interview question with its short answer and the live views that prove it."""

    id: str
    """Unique and stable (it is stored in a user's progress): ``<family>.<short-name>``."""
    topic: str
    """One of ``TOPICS``."""
    difficulty: int
    """1 warm-up, 2 core, 3 deep (``DIFFICULTIES``)."""
    question: str
    answer: tuple[str, ...]
    """Three to six markdown points; ``{name}`` placeholders are filled from ``numbers``."""
    links: tuple[Link, ...]
    page: str | None = None
    """The page whose "interview questions" panel lists this question (None: fundamentals)."""
    prediction: Prediction | None = None
    numbers: Callable[[], Mapping[str, str]] | None = None
    """Values for the answer's placeholders, computed by rlviz when the answer is shown."""
    whiteboard: Callable | None = None
    """The whiteboard version of the answer (a function in ``rlviz.interview.whiteboard``)."""

    def answer_points(self) -> tuple[str, ...]:
        """The answer with its numbers filled in."""
        if self.numbers is None:
            return self.answer
        values = dict(self.numbers())
        return tuple(point.format(**values) for point in self.answer)


def bank() -> tuple[Question, ...]:
    """Every question, family by family (modules in this package that define ``QUESTIONS``)."""
    return _load()


def for_page(slug: str) -> tuple[Question, ...]:
    """The questions a page lists in its "interview questions" panel."""
    if not _BY_PAGE:
        by_page: dict[str | None, list[Question]] = {}
        for q in _load():
            by_page.setdefault(q.page, []).append(q)
        _BY_PAGE.append({page: tuple(qs) for page, qs in by_page.items()})
    return _BY_PAGE[0].get(slug, ())


_CACHE: list[tuple[Question, ...]] = []
_BY_PAGE: list[dict[str | None, tuple[Question, ...]]] = []
"""The bank by page, made on the first lookup (every rerun of a page asks)."""


def _load() -> tuple[Question, ...]:
    if not _CACHE:
        found: list[Question] = []
        for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
            if info.name.startswith("_") or info.name == "whiteboard":
                continue
            module = importlib.import_module(f"{__name__}.{info.name}")
            found.extend(getattr(module, "QUESTIONS", ()))
        _CACHE.append(tuple(found))
    return _CACHE[0]
