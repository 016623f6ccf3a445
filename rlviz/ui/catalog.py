"""The pages of the app: one entry per algorithm family, in navigation order.

``app.py`` builds the navigation from this list and the home page draws a card per entry; a
page appears only once its file exists, so a new page needs one entry here and one file in
``pages/``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

__all__ = ["HOME", "PAGES", "ROOT", "SECTIONS", "PageInfo", "available_pages", "page_info"]

ROOT = Path(__file__).resolve().parents[2]

SECTIONS = (
    "Dynamic programming",
    "TD control",
    "Bandits",
    "Policy gradients",
    "Planning",
    "Distributional RL",
    "Offline RL",
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
        """The page's path in the browser.

        It is the file stem, so that a link resolves to this page even on a server whose first
        visitor arrives through it (see ``rlviz.ui.navigation.leave_legacy_pages_mode``).
        """
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
        slug="cliff_td",
        title="Q-learning vs SARSA",
        section="TD control",
        icon=":material/landscape:",
        teaches="Off-policy Q-learning hugs the cliff edge and falls in while exploring; "
        "on-policy SARSA walks the safe path and earns more online.",
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
)


def available_pages() -> list[PageInfo]:
    """The pages whose files exist, in navigation order (looked up once per process)."""
    return list(_available())


@functools.cache
def _available() -> tuple[PageInfo, ...]:
    return tuple(p for p in PAGES if p.exists)


def page_info(slug: str) -> PageInfo:
    """Look up a page by slug."""
    for p in (HOME, *PAGES):
        if p.slug == slug:
            return p
    raise KeyError(f"no page named {slug!r} in the catalog")
