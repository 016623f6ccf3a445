"""Lessons for a class, and the teacher's settings that shape what a page shows.

A lesson walks a room through several page views: each ``Step`` is a page (its slug) with the
query string that restores the view, a prompt the class answers first ("Predict: …") and what
to reveal once it has. A lesson travels as JSON (``to_json``/``from_json``) or as one short
link parameter (``encode``/``decode``: compressed JSON in URL-safe base64).

A ``TeacherView`` is what a teacher link adds to a page's own query string, in parameters no
page control uses (they start with an underscore)::

    ?eps=0.3&_hide=seed,lr&_lock=eps&_text=0&_present=1&_slide=2

``_hide`` lists controls that are not drawn (their value, from the link or the default, still
applies), ``_lock`` controls drawn greyed out at the link's value, ``_text=0`` hides the
explanatory text, ``_present=1`` turns on the presentation mode (large type, one figure at a
time; ``_slide`` is the figure shown, from 1).

Nothing here imports streamlit: the pages' chrome (``rlviz.ui.classroom``) draws it.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlencode

from rlviz.errors import InputError

__all__ = [
    "LESSONS",
    "RESERVED",
    "Lesson",
    "Step",
    "TeacherView",
    "decode",
    "encode",
    "lesson",
]

HIDE, LOCK, TEXT, PRESENT, SLIDE = "_hide", "_lock", "_text", "_present", "_slide"
RESERVED = frozenset({HIDE, LOCK, TEXT, PRESENT, SLIDE})
"""Query parameters of teacher links; no page control may be named like one."""

MAX_STEPS = 40
MAX_TEXT = 2000
"""Longest prompt, reveal, title or summary, in characters."""
MAX_QUERY = 4000
"""Longest query string of a step, in characters."""
MAX_LINK = 16_000
"""Longest encoded lesson accepted from a link (a URL should stay far below 32 KB)."""
MAX_JSON = 256_000
"""Most bytes a lesson's JSON may take, encoded or decompressed."""
FORMAT = 1
"""Version of the JSON layout."""

_SLUG = re.compile(r"^[a-z][a-z0-9_]{0,40}$")
_NAME = re.compile(r"^[A-Za-z0-9_]{1,40}$")
_TRUE, _FALSE = {"1", "true", "yes", "on"}, {"0", "false", "no", "off"}


# --------------------------------------------------------------------------- teacher links
def _names(raw: str) -> tuple[str, ...]:
    parts = [p.strip() for p in str(raw).split(",")]
    return tuple(dict.fromkeys(p for p in parts if p))


def _flag(raw: str) -> bool:
    text = str(raw).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError("not on/off (use 1 or 0)")


@dataclass(frozen=True)
class TeacherView:
    """What a teacher link changes on a page (the default changes nothing)."""

    hide: tuple[str, ...] = ()
    """Controls not drawn; their value still applies."""
    lock: tuple[str, ...] = ()
    """Controls drawn disabled at the link's value (a hidden one is not drawn at all)."""
    text: bool = True
    """Show the intro, "read it like this" and "try this" text."""
    present: bool = False
    """Presentation mode: large type, sidebar folded, one figure at a time."""
    slide: int = 1
    """The figure shown in presentation mode, from 1."""

    @property
    def active(self) -> bool:
        """Whether the view differs from a plain page."""
        return self != TeacherView()

    @property
    def pinned(self) -> tuple[str, ...]:
        """Controls whose value the link fixes: the hidden and the locked ones."""
        return tuple(dict.fromkeys((*self.hide, *self.lock)))

    def query(self) -> dict[str, str]:
        """The link parameters (only those that differ from a plain page)."""
        out: dict[str, str] = {}
        if self.hide:
            out[HIDE] = ",".join(self.hide)
        if self.lock:
            out[LOCK] = ",".join(self.lock)
        if not self.text:
            out[TEXT] = "0"
        if self.present:
            out[PRESENT] = "1"
            if self.slide > 1:
                out[SLIDE] = str(self.slide)
        return out

    @classmethod
    def from_query(cls, query: Mapping[str, str]) -> tuple[TeacherView, list[str]]:
        """Read the reserved parameters of a link.

        Returns:
            The view, and a reason for each parameter that was ignored (``"_text=maybe: not
            on/off (use 1 or 0)"``); the other parameters still apply.
        """
        problems: list[str] = []
        fields: dict[str, Any] = {}
        for key, name in ((HIDE, "hide"), (LOCK, "lock")):
            if key in query:
                names = _names(query[key])
                bad = [n for n in names if not _NAME.match(n)]
                if bad:
                    problems.append(f"{key}: {len(bad)} name(s) are not control names")
                fields[name] = tuple(n for n in names if _NAME.match(n))
        for key, name in ((TEXT, "text"), (PRESENT, "present")):
            if key in query:
                try:
                    fields[name] = _flag(query[key])
                except ValueError as err:
                    problems.append(f"{key}={query[key]}: {err}")
        if SLIDE in query:
            try:
                slide = int(str(query[SLIDE]).strip())
                if not 1 <= slide <= 1000:
                    raise ValueError
                fields["slide"] = slide
            except ValueError:
                problems.append(f"{SLIDE}={query[SLIDE]}: not a figure number from 1")
        return cls(**fields), problems

    def at_slide(self, slide: int) -> TeacherView:
        """The same view at another figure (from 1)."""
        return replace(self, slide=max(1, int(slide)))


# --------------------------------------------------------------------------- lessons
def _text(value: Any, what: str, *, required: bool = False) -> str:
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise InputError(f"{what} should be text")
    if len(value) > MAX_TEXT:
        raise InputError(f"{what} is longer than {MAX_TEXT} characters")
    if required and not value.strip():
        raise InputError(f"{what} is empty")
    return value


@dataclass(frozen=True)
class Step:
    """One page view of a lesson, its prompt and what to reveal afterwards."""

    slug: str
    """The page (file stem in ``pages/``)."""
    query: tuple[tuple[str, str], ...] = ()
    """The view's query string as (name, value) pairs: control values and teacher settings."""
    prompt: str = ""
    """What the class answers before anything moves ("Predict: …")."""
    reveal: str = ""
    """What to show once the class has answered."""

    def __post_init__(self) -> None:
        if not isinstance(self.slug, str) or not _SLUG.match(self.slug):
            raise InputError(f"step page {str(self.slug)[:40]!r} is not a page name")
        pairs = self.query.items() if isinstance(self.query, Mapping) else self.query
        try:
            query = tuple((str(k), str(v)) for k, v in pairs)
        except (TypeError, ValueError):
            raise InputError("a step's query should map names to values") from None
        if any(not _NAME.match(k) for k, _ in query):
            raise InputError("a step's query has a parameter that is not a control name")
        object.__setattr__(self, "query", query)
        if len(self.link_query) > MAX_QUERY:
            raise InputError(f"a step's query is longer than {MAX_QUERY} characters")
        _text(self.prompt, "a step's prompt")
        _text(self.reveal, "a step's reveal")

    @property
    def params(self) -> dict[str, str]:
        """The query as a dict."""
        return dict(self.query)

    @property
    def link_query(self) -> str:
        """The query string (without ``?``)."""
        return urlencode(self.query, safe=",")

    @property
    def path(self) -> str:
        """The view's address inside the app: ``slug?query``."""
        return f"{self.slug}?{self.link_query}" if self.query else self.slug

    @property
    def teacher(self) -> TeacherView:
        """The teacher settings of the view."""
        return TeacherView.from_query(self.params)[0]

    def to_dict(self) -> dict[str, Any]:
        """The step as JSON data: ``{"page", "query", "prompt", "reveal"}``."""
        out: dict[str, Any] = {"page": self.slug, "query": dict(self.query)}
        if self.prompt:
            out["prompt"] = self.prompt
        if self.reveal:
            out["reveal"] = self.reveal
        return out

    @classmethod
    def from_dict(cls, data: Any) -> Step:
        """A step from JSON data; its query may also be a query string."""
        if not isinstance(data, Mapping):
            raise InputError("a step should be an object with a page, a query and a prompt")
        query = data.get("query", {})
        if isinstance(query, str):  # "a=1&b=2", as copied from a link
            from urllib.parse import parse_qsl

            query = parse_qsl(query.lstrip("?"), keep_blank_values=True)
        elif not isinstance(query, Mapping):
            raise InputError("a step's query should be an object of names and values")
        else:
            query = list(query.items())
        return cls(slug=data.get("page", data.get("slug", "")), query=tuple(query),
                   prompt=data.get("prompt", ""), reveal=data.get("reveal", ""))


@dataclass(frozen=True)
class Lesson:
    """An ordered list of steps with a title."""

    title: str
    steps: tuple[Step, ...] = ()
    summary: str = ""
    """One or two sentences: what the class will have seen."""
    minutes: int | None = None
    """About how long it takes in class."""
    id: str = ""
    """Short name of a ready lesson (its link is ``lessons?lesson=<id>``); empty for others."""
    _checked: bool = field(default=True, repr=False, compare=False)

    def __post_init__(self) -> None:
        _text(self.title, "the lesson's title", required=True)
        _text(self.summary, "the lesson's summary")
        object.__setattr__(self, "steps", tuple(self.steps))
        if len(self.steps) > MAX_STEPS:
            raise InputError(f"a lesson has at most {MAX_STEPS} steps")
        if not all(isinstance(s, Step) for s in self.steps):
            raise InputError("every step of a lesson should be a Step")
        if self.minutes is not None and not (
            isinstance(self.minutes, int) and 0 < self.minutes <= 600
        ):
            raise InputError("a lesson's minutes should be a whole number from 1 to 600")

    # ---- editing (each returns a new lesson)
    def with_step(self, step: Step) -> Lesson:
        """The lesson with ``step`` appended."""
        return replace(self, steps=(*self.steps, step), id="")

    def without(self, index: int) -> Lesson:
        """The lesson without the step at ``index``."""
        return replace(self, steps=self.steps[:index] + self.steps[index + 1:], id="")

    def moved(self, index: int, by: int) -> Lesson:
        """The step at ``index`` moved ``by`` places (clamped to the ends)."""
        steps = list(self.steps)
        target = min(max(index + by, 0), len(steps) - 1)
        steps.insert(target, steps.pop(index))
        return replace(self, steps=tuple(steps), id="")

    def edited(self, index: int, **changes: str) -> Lesson:
        """The lesson with the step at ``index`` changed (its prompt, its reveal)."""
        steps = list(self.steps)
        steps[index] = replace(steps[index], **changes)
        return replace(self, steps=tuple(steps), id="")

    # ---- JSON
    def to_dict(self) -> dict[str, Any]:
        """The lesson as JSON data (a ready lesson's id is not part of it)."""
        out: dict[str, Any] = {"rlviz_lesson": FORMAT, "title": self.title}
        if self.summary:
            out["summary"] = self.summary
        if self.minutes is not None:
            out["minutes"] = self.minutes
        out["steps"] = [s.to_dict() for s in self.steps]
        return out

    def to_json(self, *, indent: int | None = 2) -> str:
        """The lesson as JSON text (compact with ``indent=None``)."""
        separators = (",", ":") if indent is None else None
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False,
                          separators=separators)

    @classmethod
    def from_dict(cls, data: Any) -> Lesson:
        """A lesson from JSON data; raises ``InputError`` saying what is wrong."""
        if not isinstance(data, Mapping):
            raise InputError("a lesson should be a JSON object with a title and steps")
        version = data.get("rlviz_lesson", FORMAT)
        if version != FORMAT:
            raise InputError(f"this lesson's format ({str(version)[:10]}) is not one rlviz "
                             f"reads ({FORMAT})")
        steps = data.get("steps", [])
        if not isinstance(steps, list):
            raise InputError("a lesson's steps should be a list")
        if len(steps) > MAX_STEPS:
            raise InputError(f"a lesson has at most {MAX_STEPS} steps")
        minutes = data.get("minutes")
        if isinstance(minutes, bool) or (minutes is not None and not isinstance(minutes, int)):
            raise InputError("a lesson's minutes should be a whole number from 1 to 600")
        parsed = []
        for i, s in enumerate(steps, start=1):
            try:
                parsed.append(Step.from_dict(s))
            except InputError as err:
                raise InputError(f"step {i}: {err}") from None
        return cls(title=data.get("title", ""), summary=data.get("summary", ""),
                   minutes=minutes, steps=tuple(parsed))

    @classmethod
    def from_json(cls, text: str | bytes) -> Lesson:
        """A lesson from JSON text; raises ``InputError`` saying what is wrong."""
        if len(text) > MAX_JSON:
            raise InputError(f"a lesson's JSON is larger than {MAX_JSON // 1000} KB")
        try:
            data = json.loads(text)
        except (ValueError, UnicodeDecodeError) as err:
            raise InputError(f"this is not JSON ({str(err)[:80]})") from None
        return cls.from_dict(data)


def encode(lesson: Lesson) -> str:
    """A lesson as one URL-safe word: its compact JSON, compressed, in base64url."""
    raw = lesson.to_json(indent=None).encode()
    return base64.urlsafe_b64encode(zlib.compress(raw, 9)).decode().rstrip("=")


def decode(word: str) -> Lesson:
    """The lesson of ``encode``; raises ``InputError`` saying what is wrong."""
    word = str(word).strip()
    if len(word) > MAX_LINK:
        raise InputError(f"the lesson in this link is longer than {MAX_LINK} characters")
    try:
        packed = base64.urlsafe_b64decode(word + "=" * (-len(word) % 4))
        inflate = zlib.decompressobj()
        raw = inflate.decompress(packed, MAX_JSON)
        if inflate.unconsumed_tail or not inflate.eof:
            raise InputError("the lesson in this link is cut short or too large")
    except (binascii.Error, ValueError, zlib.error) as err:
        if isinstance(err, InputError):
            raise
        raise InputError("the lesson in this link is damaged (it may have been cut short "
                         "when it was copied)") from None
    return Lesson.from_json(raw)


# --------------------------------------------------------------------------- ready lessons
def _step(slug: str, prompt: str, reveal: str, **query: Any) -> Step:
    return Step(slug=slug, query=tuple((k, str(v)) for k, v in query.items()),
                prompt=prompt, reveal=reveal)


_QUIET = {"_text": 0}  # the class reads the prompt, not the page's explanation

LESSONS: tuple[Lesson, ...] = (
    Lesson(
        id="on-off-policy",
        title="On-policy vs off-policy in 20 minutes",
        minutes=20,
        summary="Q-learning learns about the greedy policy while it explores, SARSA about the "
        "policy it follows; learning about one policy from another's data brings a bias of "
        "maximisation and the variance of importance weights.",
        steps=(
            _step("cliff_td", "Predict: which learner earns more per episode while it "
                  "explores with ε = 0.1, and which path does each one learn?",
                  "SARSA earns more online (about −25 against −50): Q-learning learns the "
                  "shortest path along the edge and falls in when it explores; SARSA, learning "
                  "about the ε-greedy policy it follows, keeps away from the edge.",
                  algos="q_learning,sarsa", epsilon=0.1, _lock="algos,epsilon",
                  _hide="seed,max_steps,rows,cols,slip", **_QUIET),
            _step("cliff_td", "Predict: with ε decaying to 0 by the last episode, which "
                  "learner ends with the higher return?",
                  "Q-learning (about −16 against −18): as exploration fades it stops falling "
                  "off the edge, and its shortest path pays. SARSA, learning about an ever "
                  "greedier policy, shortens its path but keeps some margin from the edge.",
                  algos="q_learning,sarsa", decay=1, _lock="algos,decay",
                  _hide="seed,max_steps", **_QUIET),
            _step("max_bias", "Predict: from A, going left leads to many actions that each pay "
                  "−0.1 on average. How often does Q-learning go left in its first episodes?",
                  "Far more than the 5% that ε-greedy forces: the max over noisy estimates is "
                  "biased upward, so left looks better than it is. Double Q-learning's two "
                  "tables remove the bias.",
                  actions=10, sigma=1.0, _lock="actions", _hide="seed", **_QUIET),
            _step("max_bias", "Predict: what happens to the bias with no reward noise (σ = 0)?",
                  "It all but disappears: once every action at B has been tried, each estimate "
                  "is its true −0.1, and Q-learning goes left only the 5% that ε-greedy forces.",
                  sigma=0.0, _lock="sigma", _hide="seed"),
            _step("importance_sampling", "Predict: as the target policy moves away from the "
                  "behaviour policy (δ from 0 to 1), which estimator's error grows fastest?",
                  "Ordinary importance sampling: its weights multiply along the episode and "
                  "their variance explodes; the weighted and per-decision estimators stay "
                  "stable at a small bias.",
                  delta=0.8, _lock="delta", _hide="seed,critic", **_QUIET),
        ),
    ),
    Lesson(
        id="td-to-gae",
        title="From TD(0) to GAE",
        minutes=25,
        summary="Between the one-step TD error and the Monte-Carlo return lie the n-step "
        "returns and their λ-average; GAE is the same average applied to advantages.",
        steps=(
            _step("multistep_td", "Predict: on the 19-state random walk, which n learns "
                  "fastest: 1 (TD(0)), an intermediate n, or a very large n (Monte Carlo)?",
                  "An intermediate n (about 4) has the lowest error: n = 1 bootstraps on "
                  "estimates that are still wrong, large n carries the return's variance.",
                  method="n_step", _hide="seed", **_QUIET),
            _step("multistep_td", "Predict: does the λ-return trace the same U-shaped curve "
                  "over α as n-step TD?",
                  "Yes: λ plays the part of n (λ = 0 is TD(0), λ = 1 Monte Carlo), and "
                  "intermediate values learn fastest.",
                  method="offline_lambda_return", _hide="seed"),
            _step("gae", "Predict: with a biased critic, how does the advantage's error change "
                  "as λ goes from 0 to 1?",
                  "Bias falls and variance rises: λ = 0 is the one-step TD error (all critic), "
                  "λ = 1 the Monte-Carlo advantage (no critic bias, most variance).",
                  lam=0.95, bias=0.1, _lock="bias", _hide="seed", **_QUIET),
            _step("gae", "Predict: what goes wrong when time-limit truncations are treated as "
                  "terminations?",
                  "The cut state's value is dropped from the return, so advantages near each "
                  "cut are biased low: the classic time-limit bug.",
                  as_terminal=1, _lock="as_terminal", _hide="seed"),
        ),
    ),
    Lesson(
        id="exploration",
        title="Exploration",
        minutes=20,
        summary="From bandits to deep exploration: dithering pays a linear regret and needs "
        "exponentially many episodes to find a distant reward; optimism and posterior sampling "
        "do not.",
        steps=(
            _step("bandits", "Predict: after 1000 steps, whose regret is still growing in a "
                  "straight line: greedy, ε-greedy, UCB or Thompson sampling?",
                  "Greedy and ε-greedy: they keep paying for a fixed rate of bad pulls (or "
                  "lock onto a bad arm). UCB and Thompson sampling bend toward the logarithmic "
                  "lower bound.",
                  racers="greedy,eps_a,ucb,thompson", _lock="racers",
                  _hide="seed,runs,steps", **_QUIET),
            _step("bandits", "Predict: what does an optimistic initial estimate do to a greedy "
                  "learner?",
                  "It explores early without any ε: every arm disappoints it in turn until the "
                  "estimates come down, and then it settles on a good arm.",
                  racers="greedy,optimistic,eps_a", _lock="racers", _hide="seed"),
            _step("exploration", "Predict: on the deep sea of size 10, how many episodes does "
                  "ε-greedy need to reach the treasure once?",
                  "More than it is given: in 100 episodes ε-greedy usually never reaches it, "
                  "since it needs N right moves in a row and dithering makes them with "
                  "probability about 2^−N per episode. The count bonus, posterior sampling and "
                  "optimism find it in every run, within tens of episodes.",
                  problem="deep_sea", n=10, _lock="problem", _hide="seed", **_QUIET),
            _step("exploration", "Predict: how does the number of episodes to the first "
                  "treasure grow with N for each learner?",
                  "Exponentially for dithering, polynomially for optimism (the N sweep).",
                  problem="deep_sea", _hide="seed"),
        ),
    ),
    Lesson(
        id="ppo-to-grpo",
        title="From PPO to GRPO",
        minutes=25,
        summary="PPO's clip keeps each update near the old policy; GRPO keeps the clip and "
        "replaces the critic with the group's own statistics.",
        steps=(
            _step("ppo_clip", "Predict: with a positive advantage, what does the clipped "
                  "objective do once the ratio r passes 1 + ε?",
                  "It goes flat: the gradient is zero there, so no more epochs on the batch can "
                  "push the policy further in that direction.",
                  eps=0.2, _lock="eps", _hide="seed,opt,noise", _present=1, **_QUIET),
            _step("ppo_clip", "Predict: what happens to the policy over many epochs when the "
                  "clip range is wide (ε = 0.5)?",
                  "It moves much further from the old policy (the KL grows): the clip is what "
                  "held it in the trust region.",
                  eps=0.5, epochs=30, _lock="eps", _hide="seed"),
            _step("grpo", "Predict: without a critic, what does GRPO subtract from each "
                  "response's reward?",
                  "The mean reward of its group (and it divides by the group's std): the group "
                  "is its own baseline.",
                  trainers="grpo,ppo", _lock="trainers", _hide="seed", **_QUIET),
            _step("grpo", "Predict: a group in which every response got the same reward: "
                  "what is each response's advantage?",
                  "Zero: mean-centred, every advantage vanishes, and the group teaches "
                  "nothing (the std normalisation has nothing to scale).",
                  rewards="1, 1, 1, 1", _lock="rewards", _hide="seed"),
        ),
    ),
    Lesson(
        id="deadly-triad",
        title="Why the deadly triad",
        minutes=15,
        summary="Off-policy sampling, bootstrapping and function approximation: any two are "
        "safe, all three can make the weights grow without bound.",
        steps=(
            _step("deadly_triad", "Predict: on Baird's counterexample, do semi-gradient TD's "
                  "weights settle?",
                  "No: they grow without bound, although every true value is 0 and the "
                  "features can represent it exactly.",
                  _hide="seed,runs", **_QUIET),
            _step("deadly_triad", "Predict: switch sampling to the target policy (on-policy). "
                  "Do the weights settle now?",
                  "Yes: sampled in π's own state distribution, semi-gradient TD is stable.",
                  off_policy=0, _lock="off_policy,approx,n", _hide="seed,runs"),
            _step("deadly_triad", "Predict: keep it off-policy but stop bootstrapping "
                  "(Monte Carlo returns). Do they settle?",
                  "Yes: without bootstrapping the update follows the gradient of a fixed "
                  "objective and does not feed on its own estimates.",
                  n="mc", _lock="off_policy,approx,n", _hide="seed,runs"),
            _step("deadly_triad", "Predict: off-policy and bootstrapping, but tabular features. "
                  "Stable?",
                  "It no longer diverges: with one feature per state an update changes only "
                  "its own state's value, and the error's growth per sweep falls below 1 (it "
                  "shrinks, slowly), where with Baird's features it stays above 1.",
                  approx=0, _lock="off_policy,approx,n", _hide="seed,runs"),
        ),
    ),
)


def lesson(lesson_id: str) -> Lesson:
    """A ready lesson by its id."""
    for item in LESSONS:
        if item.id == lesson_id:
            return item
    raise KeyError(lesson_id)


def ready_ids() -> Iterable[str]:
    """The ids of the ready lessons."""
    return (item.id for item in LESSONS)
