"""The interview drill's logic: filtering the bank, progress as URL text, the printable handout.

No Streamlit here: the drill page (``pages/drill.py``, with its helpers in ``rlviz.ui.drill``)
draws what these functions return.

Progress lives in the user's URL, never on the server: each question is named by a short token
(three URL-safe characters derived from its id, so a token stays valid when questions are added
or reordered), and the questions marked "knew it" and "didn't" are the concatenations of their
tokens, e.g. ``?known=k3PaZ_&missed=x9Q``.
"""

from __future__ import annotations

import base64
import hashlib
import html
import inspect
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from rlviz.interview import DIFFICULTIES, TOPICS, Question

__all__ = [
    "TOKEN_LENGTH", "Progress", "TopicScore", "decode", "encode", "filter_questions",
    "handout_html", "handout_markdown", "next_question", "summary", "token", "whiteboard_source",
]

TOKEN_LENGTH = 3
"""Characters per question in the progress text (64³ ≈ 262,000 distinct tokens)."""


def token(question_id: str) -> str:
    """The question's short, stable name in a progress URL (URL-safe base64 of its hash)."""
    digest = hashlib.sha256(question_id.encode()).digest()
    return base64.urlsafe_b64encode(digest).decode()[:TOKEN_LENGTH]


def filter_questions(questions: Iterable[Question], *, topics: Sequence[str] | None = None,
                     difficulties: Sequence[int] | None = None,
                     page: str | None = None) -> tuple[Question, ...]:
    """The questions with one of ``topics`` and one of ``difficulties``, in bank order.

    None or empty means any; ``page`` keeps only the questions listed on that page.
    """
    return tuple(
        q for q in questions
        if (not topics or q.topic in topics)
        and (not difficulties or q.difficulty in difficulties)
        and (page is None or q.page == page)
    )


@dataclass(frozen=True)
class Progress:
    """Which questions the user marked, by id."""

    known: frozenset[str] = frozenset()
    missed: frozenset[str] = frozenset()

    def mark(self, question_id: str, *, knew: bool) -> Progress:
        """A new progress with the question marked (a later mark replaces an earlier one)."""
        known, missed = set(self.known) - {question_id}, set(self.missed) - {question_id}
        (known if knew else missed).add(question_id)
        return Progress(frozenset(known), frozenset(missed))

    @property
    def marked(self) -> frozenset[str]:
        """Every question marked either way."""
        return self.known | self.missed


def encode(progress: Progress, questions: Sequence[Question]) -> dict[str, str]:
    """Query parameters for the progress: ``known`` and ``missed`` (absent when empty).

    Tokens follow the bank's order, so the same progress always gives the same URL.
    """
    out = {}
    for name, ids in (("known", progress.known), ("missed", progress.missed)):
        text = "".join(token(q.id) for q in questions if q.id in ids)
        if text:
            out[name] = text
    return out


def decode(params: Mapping[str, str], questions: Sequence[Question]) -> tuple[Progress, int]:
    """Progress from query parameters; also how many tokens matched no question.

    Tokens that match no question (a question since removed, a mangled link) are dropped.
    """
    by_token = {token(q.id): q.id for q in questions}
    found: dict[str, set[str]] = {"known": set(), "missed": set()}
    unknown = 0
    for name in found:
        text = str(params.get(name, "") or "")
        for i in range(0, len(text), TOKEN_LENGTH):
            qid = by_token.get(text[i:i + TOKEN_LENGTH])
            if qid is None:
                unknown += 1
            else:
                found[name].add(qid)
    missed = found["missed"] - found["known"]  # a question in both counts as known
    return Progress(frozenset(found["known"]), frozenset(missed)), unknown


def next_question(questions: Sequence[Question], progress: Progress,
                  after: str | None = None) -> Question | None:
    """The first unmarked question (after the one with id ``after``, wrapping round)."""
    if not questions:
        return None
    ids = [q.id for q in questions]
    start = ids.index(after) + 1 if after in ids else 0
    for q in (*questions[start:], *questions[:start]):
        if q.id not in progress.marked:
            return q
    return None


@dataclass(frozen=True)
class TopicScore:
    """One row of the session summary."""

    topic: str
    questions: int
    known: int
    missed: int

    @property
    def unseen(self) -> int:
        """Questions not marked yet."""
        return self.questions - self.known - self.missed


def summary(questions: Sequence[Question], progress: Progress) -> tuple[TopicScore, ...]:
    """Per topic: how many questions, how many marked known, how many missed.

    Topics come in ``TOPICS`` order; those without questions are left out.
    """
    rows = []
    for topic in TOPICS:
        ids = [q.id for q in questions if q.topic == topic]
        if ids:
            rows.append(TopicScore(topic, len(ids), sum(i in progress.known for i in ids),
                                   sum(i in progress.missed for i in ids)))
    return tuple(rows)


def whiteboard_source(question: Question) -> str | None:
    """The source of the question's whiteboard version, or None."""
    if question.whiteboard is None:
        return None
    return inspect.getsource(inspect.unwrap(question.whiteboard))


# --------------------------------------------------------------------------------- handout
Points = Callable[[Question], Sequence[str]]


def _points(question: Question) -> Sequence[str]:
    return question.answer_points()


def _absolute(base_url: str, path: str) -> str:
    return base_url.rstrip("/") + path if base_url else path


def handout_markdown(questions: Sequence[Question], *, base_url: str = "",
                     title: str = "rlviz interview drill", points: Points = _points) -> str:
    """The questions as one Markdown document, grouped by topic.

    Each question comes with its answer, its live links and, where it has one, the whiteboard
    code.

    Args:
        questions: What to include, in order.
        base_url: Prefix of the live links (the app's address); empty gives paths.
        title: The document's heading.
        points: A question's answer points with its numbers filled in (the drill passes a
            cached version; computing every number of the bank takes a few seconds).
    """
    lines = [f"# {title}", "", f"{len(questions)} questions.", ""]
    for topic in TOPICS:
        chosen = [q for q in questions if q.topic == topic]
        if not chosen:
            continue
        lines += [f"## {topic}", ""]
        for q in chosen:
            lines += [f"### {q.question}", "", f"*{DIFFICULTIES[q.difficulty]}* · `{q.id}`", ""]
            if q.prediction is not None:
                options = " / ".join(q.prediction.options)
                lines += [f"Predict first: {q.prediction.prompt} ({options})", ""]
            lines += [f"- {p}" for p in points(q)]
            if q.prediction is not None:
                lines += [f"- Prediction: **{q.prediction.options[q.prediction.answer]}**"]
            lines.append("")
            code = whiteboard_source(q)
            if code is not None:
                lines += ["At the whiteboard:", "", "```python", code.rstrip(), "```", ""]
            lines += ["Live: " + " · ".join(
                f"[{link.shows or link.url}]({_absolute(base_url, link.url)})"
                for link in q.links), ""]
    return "\n".join(lines)


_CODE = re.compile(r"`([^`]+)`")
_BOLD = re.compile(r"\*\*([^*]+)\*\*")

PRINT_CSS = """
body { font: 11pt/1.45 Georgia, 'Times New Roman', serif; max-width: 46em; margin: 2em auto;
       padding: 0 1em; color: #111; }
h1 { font-size: 20pt; margin-bottom: 0.2em; } h2 { font-size: 15pt; margin-top: 1.6em;
     border-bottom: 1px solid #999; }
h3 { font-size: 11.5pt; margin: 1.2em 0 0.3em; }
.meta { color: #555; font-size: 9pt; } .predict { font-style: italic; }
code, pre { font-family: 'DejaVu Sans Mono', Menlo, monospace; font-size: 8.5pt; }
pre { background: #f4f4f4; border: 1px solid #ddd; padding: 0.5em; white-space: pre-wrap; }
ul { margin: 0.3em 0; padding-left: 1.3em; } a { color: #0b57a4; }
.question { break-inside: avoid; page-break-inside: avoid; }
@media print {
  body { margin: 0; max-width: none; font-size: 10pt; }
  h2 { break-after: avoid; page-break-after: avoid; }
  a { color: #111; text-decoration: none; }
  a.live::after { content: " (" attr(href) ")"; font-size: 8pt; color: #555;
                  word-break: break-all; }
  pre { background: none; }
}
@page { margin: 1.6cm; }
"""


def _inline(text: str) -> str:
    """Escaped text with `code` and **bold** spans as HTML."""
    out = html.escape(text, quote=False)
    out = _CODE.sub(lambda m: f"<code>{m.group(1)}</code>", out)
    return _BOLD.sub(lambda m: f"<strong>{m.group(1)}</strong>", out)


def handout_html(questions: Sequence[Question], *, base_url: str = "",
                 title: str = "rlviz interview drill", points: Points = _points) -> str:
    """The same handout as one self-contained HTML file that prints well.

    No scripts and no external files; a question never splits across printed pages, and printed
    links show their address.

    Args: as for ``handout_markdown``.
    """
    body = [f"<h1>{html.escape(title)}</h1>",
            f"<p class='meta'>{len(questions)} questions.</p>"]
    for topic in TOPICS:
        chosen = [q for q in questions if q.topic == topic]
        if not chosen:
            continue
        body.append(f"<h2>{html.escape(topic)}</h2>")
        for q in chosen:
            part = [f"<section class='question' id='{html.escape(q.id)}'>",
                    f"<h3>{_inline(q.question)}</h3>",
                    f"<p class='meta'>{DIFFICULTIES[q.difficulty]} · {html.escape(q.id)}</p>"]
            if q.prediction is not None:
                options = " / ".join(q.prediction.options)
                part.append(f"<p class='predict'>Predict first: {_inline(q.prediction.prompt)} "
                            f"({_inline(options)})</p>")
            items = [f"<li>{_inline(p)}</li>" for p in points(q)]
            if q.prediction is not None:
                answer = q.prediction.options[q.prediction.answer]
                items.append(f"<li>Prediction: <strong>{_inline(answer)}</strong></li>")
            part.append("<ul>" + "".join(items) + "</ul>")
            code = whiteboard_source(q)
            if code is not None:
                part.append("<p>At the whiteboard:</p><pre><code>"
                            f"{html.escape(code.rstrip(), quote=False)}</code></pre>")
            links = " · ".join(
                f"<a class='live' href='{html.escape(_absolute(base_url, link.url))}'>"
                f"{_inline(link.shows or link.url)}</a>" for link in q.links)
            part += [f"<p>Live: {links}</p>", "</section>"]
            body.append("\n".join(part))
    return ("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
            f"<title>{html.escape(title)}</title><style>{PRINT_CSS}</style></head>"
            "<body>\n" + "\n".join(body) + "\n</body></html>\n")
