"""The pages of the app: one entry per algorithm family, in navigation order.

``app.py`` builds the navigation from this list and the home page draws a card per entry; a
page appears only once its file exists, so a new page needs one entry here and one file in
``pages/``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "DRILL", "HOME", "LESSONS", "PAGES", "ROOT", "SECTIONS", "PageInfo", "available_pages",
    "page_info",
]

ROOT = Path(__file__).resolve().parents[2]

SECTIONS = (
    "Dynamic programming",
    "Prediction",
    "TD control",
    "Off-policy learning",
    "Function approximation",
    "Bandits",
    "Exploration",
    "Policy gradients",
    "Planning",
    "Distributional RL",
    "Offline RL",
    "LLM alignment",
)


@dataclass(frozen=True)
class PageInfo:
    """What the navigation and the home page need to know about one page."""

    slug: str
    """File stem in ``pages/`` and prefix of the page's widget keys."""
    title: str
    """Page title, also the navigation label."""
    section: str
    """Navigation section (one of ``SECTIONS``, or "" for home)."""
    icon: str
    """Material icon shown in the navigation."""
    teaches: str
    """One sentence for the home page card: what moving the sliders teaches."""

    @property
    def file(self) -> Path:
        """The page script."""
        return ROOT / "pages" / f"{self.slug}.py"

    @property
    def url_path(self) -> str:
        """The page's path in the browser: the file stem, so links keep working as they were."""
        return self.slug

    @property
    def thumbnail(self) -> Path:
        """The card image in ``assets/thumbs``."""
        return ROOT / "assets" / "thumbs" / f"{self.slug}.png"

    @property
    def exists(self) -> bool:
        """Whether the page has been written."""
        return self.file.is_file()


HOME = PageInfo(
    slug="home",
    title="Home",
    section="",
    icon=":material/home:",
    teaches="Every family of algorithms on one page each.",
)

DRILL = PageInfo(
    slug="drill",
    title="Interview drill",
    section="",
    icon=":material/quiz:",
    teaches="Interview questions on every page, each answered by a live view: quiz yourself, "
    "mark what you knew, print a handout.",
)
"""Home's neighbour in the navigation: it teaches no algorithm of its own, so it has no card."""

LESSONS = PageInfo(
    slug="lessons",
    title="Lessons",
    section="",
    icon=":material/school:",
    teaches="Walk a class through several pages: predict, open the view, reveal.",
)
"""The lesson player and builder: beside home, not an algorithm page."""

PAGES: tuple[PageInfo, ...] = (
    PageInfo(
        slug="value_iteration",
        title="Value-iteration sweeps",
        section="Dynamic programming",
        icon=":material/grid_on:",
        teaches="Watch values spread from the rewards sweep by sweep, and see the greedy policy "
        "settle long before the values do.",
    ),
    PageInfo(
        slug="multistep_td",
        title="n-step TD and TD(λ)",
        section="Prediction",
        icon=":material/linear_scale:",
        teaches="Between one-step TD and Monte Carlo, an intermediate n or λ learns fastest; "
        "forward and backward views make the same updates.",
    ),
    PageInfo(
        slug="cliff_td",
        title="Q-learning vs SARSA",
        section="TD control",
        icon=":material/landscape:",
        teaches="Off-policy Q-learning hugs the cliff edge and falls in while exploring; "
        "on-policy SARSA walks the safe path and earns more online.",
    ),
    PageInfo(
        slug="max_bias",
        title="Maximization bias",
        section="TD control",
        icon=":material/trending_flat:",
        teaches="The max of noisy estimates is biased upward, so Q-learning prefers a bad "
        "action at first; Double Q-learning's two tables remove the bias.",
    ),
    PageInfo(
        slug="importance_sampling",
        title="Importance sampling",
        section="Off-policy learning",
        icon=":material/balance:",
        teaches="Ordinary importance sampling is unbiased but can have infinite variance; the "
        "weighted estimator trades a little bias for a stable answer.",
    ),
    PageInfo(
        slug="deadly_triad",
        title="The deadly triad",
        section="Function approximation",
        icon=":material/warning:",
        teaches="Off-policy sampling, bootstrapping and function approximation together can "
        "diverge; remove any one and learning is stable.",
    ),
    PageInfo(
        slug="bandits",
        title="Bandit regret races",
        section="Bandits",
        icon=":material/casino:",
        teaches="Exploration costs regret: ε-greedy's grows linearly while UCB and Thompson "
        "sampling bend toward the logarithmic lower bound.",
    ),
    PageInfo(
        slug="exploration",
        title="Deep exploration",
        section="Exploration",
        icon=":material/explore:",
        teaches="Dithering needs exponentially many episodes to find a distant reward; optimism "
        "and posterior sampling find it in polynomially many.",
    ),
    PageInfo(
        slug="policy_gradient",
        title="REINFORCE and baselines",
        section="Policy gradients",
        icon=":material/trending_up:",
        teaches="A baseline leaves the policy gradient unbiased and cuts its variance; a critic "
        "cuts it further at the price of bias.",
    ),
    PageInfo(
        slug="ppo_clip",
        title="PPO clip surface",
        section="Policy gradients",
        icon=":material/content_cut:",
        teaches="The clipped objective goes flat once the ratio leaves the trust region, so "
        "extra epochs cannot push the policy far.",
    ),
    PageInfo(
        slug="gae",
        title="GAE λ slider",
        section="Policy gradients",
        icon=":material/tune:",
        teaches="λ blends one-step TD errors with Monte-Carlo returns, trading the critic's bias "
        "for the return's variance.",
    ),
    PageInfo(
        slug="dyna",
        title="Dyna-Q planning",
        section="Planning",
        icon=":material/route:",
        teaches="A learned model turns each real step into many planned ones, so value spreads "
        "in a few episodes; an exploration bonus finds a world that changed; prioritized "
        "sweeping plans where the values change.",
    ),
    PageInfo(
        slug="mcts",
        title="MCTS tree growth",
        section="Planning",
        icon=":material/account_tree:",
        teaches="Tree search grows an asymmetric tree, spending simulations where value is high "
        "or uncertain, until the root's visits point at the best move.",
    ),
    PageInfo(
        slug="c51",
        title="C51 projection",
        section="Distributional RL",
        icon=":material/bar_chart:",
        teaches="The Bellman target moves atoms off the support; projection splits each one "
        "between its neighbours, preserving mass and, unless clipped, the mean.",
    ),
    PageInfo(
        slug="cql",
        title="CQL pessimism",
        section="Offline RL",
        icon=":material/shield:",
        teaches="Offline Q-learning overestimates actions the data never tried; CQL pushes them "
        "down, trading optimism for pessimism with α.",
    ),
    PageInfo(
        slug="rlhf",
        title="Preferences and DPO",
        section="LLM alignment",
        icon=":material/thumbs_up_down:",
        teaches="A reward model learned from preferences is right only where the data is; DPO "
        "reaches the KL-regularised optimum with no reward model, and over-optimising a learned "
        "reward raises the proxy while the true reward falls.",
    ),
    PageInfo(
        slug="grpo",
        title="GRPO vs PPO",
        section="LLM alignment",
        icon=":material/groups:",
        teaches="Group-relative advantages replace the critic; the std normalisation, the KL "
        "estimator and per-sequence length normalisation each change what the model learns.",
    ),
)


def available_pages() -> list[PageInfo]:
    """The pages whose files exist, in navigation order (looked up once per process)."""
    return list(_available())


@functools.cache
def _available() -> tuple[PageInfo, ...]:
    return tuple(p for p in PAGES if p.exists)


def page_info(slug: str) -> PageInfo:
    """Look up a page by slug."""
    for p in (HOME, DRILL, LESSONS, *PAGES):
        if p.slug == slug:
            return p
    raise KeyError(f"no page named {slug!r} in the catalog")
