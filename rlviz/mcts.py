r"""Monte Carlo tree search (UCT and PUCT) with a record of every iteration.

One iteration of search has four phases:

1. **Select**: from the root, repeatedly take the move with the highest score until the
   chosen move has no node yet (or the game is over on the path).
2. **Expand**: add the node that move leads to (one new node per iteration).
3. **Simulate**: play uniformly random moves from the new node to the end of the game.
4. **Back up**: add the result to the visit count and value sum of every node on the path.

Scores (``N`` visits, ``W`` value sum, ``Q = W / N`` of a move from the mover's point of view):

* UCT (Kocsis & Szepesvári 2006): ``Q(s, a) + c sqrt(ln N(s) / N(s, a))``; an untried move
  scores +inf, so every move is tried once before any is tried twice.
* PUCT (Silver et al. 2017, AlphaZero): ``Q(s, a) + c P(s, a) sqrt(N(s)) / (1 + N(s, a))``,
  with ``Q = 0`` for an untried move, so the prior ``P`` decides which moves are tried at all.
  ``N(s)`` is the visit count of ``s`` itself, as in the AlphaZero pseudo-code (Silver et al.
  2018); the papers write ``sum_b N(s, b)``, which is one less below the root and would leave
  the prior no say at a node's second visit.

Ties (several untried moves, equal scores) are broken uniformly at random.

**Value convention.** Every value is from the point of view of the **player to move** at that
node: ``value_sum[n]`` sums results for the player who moves in ``n``. The mover at the parent
wants the opposite, so the value of move ``a`` at node ``s`` is ``Q(s, a) = -W(child) /
N(child)``, and backing up flips the sign at every level (negamax). A finished game is worth
-1 to the player to move if the other player has just won, 0 if drawn.

Search state is data, in the manner of DeepMind's mctx: the tree is one frozen dataclass of
arrays, and the iteration records (path, expanded node, simulation result, backed-up values)
are enough to rebuild the tree as it stood after any iteration (``SearchTrace.snapshot``).
All randomness (tie-breaking and the random playouts) comes from one seeded Generator,
drawn up front as one uniform number per decision.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np

from rlviz.errors import InputError
from rlviz.games.base import Game, GameTable, Solution

__all__ = [
    "MAX_SIMULATIONS",
    "PRIORS",
    "RULES",
    "IterationView",
    "RootSummary",
    "SearchTrace",
    "SelectionStep",
    "Tree",
    "TreeLayout",
    "prior_table",
    "search",
    "selection_scores",
    "tree_layout",
]

RULES = ("uct", "puct")
PRIORS = ("uniform", "solver", "misleading")
MAX_SIMULATIONS = 20_000
"""Largest number of iterations one search may run."""
NO_NODE = -1


@dataclass(frozen=True, eq=False)
class Tree:
    """A search tree as arrays over its ``N`` nodes; node ``ROOT_INDEX`` is the root.

    Nodes are numbered in the order they were added, so a parent's index is always smaller
    than its children's.

    Attributes:
        parent: ``[N]`` parent node, ``NO_PARENT`` for the root.
        move: ``[N]`` move from the parent into the node (-1 for the root).
        depth: ``[N]`` moves from the root.
        state: ``[N]`` the node's position in the game's table.
        visits: ``[N]`` iterations whose path went through the node.
        value_sum: ``[N]`` sum of backed-up results, for the player to move at the node.
        prior: ``[N]`` prior probability of the move into the node (1 for the root).
        children: ``[N, A]`` child node of each move, ``UNVISITED`` where none was added.
        children_prior: ``[N, A]`` prior probability of each move at each node.
        legal: ``[N, A]`` True where the move is allowed at the node.
        terminal: ``[N]`` True where the game is over.
        created: ``[N]`` the iteration that added the node (0 for the root).
    """

    ROOT_INDEX: ClassVar[int] = 0
    NO_PARENT: ClassVar[int] = -1
    UNVISITED: ClassVar[int] = -1

    parent: np.ndarray  # [N] int32
    move: np.ndarray  # [N] int16
    depth: np.ndarray  # [N] int16
    state: np.ndarray  # [N] int32
    visits: np.ndarray  # [N] int64
    value_sum: np.ndarray  # [N] float64, for the player to move at the node
    prior: np.ndarray  # [N] float64
    children: np.ndarray  # [N, A] int32
    children_prior: np.ndarray  # [N, A] float64
    legal: np.ndarray  # [N, A] bool
    terminal: np.ndarray  # [N] bool
    created: np.ndarray  # [N] int32

    @property
    def n_nodes(self) -> int:
        """Number of nodes N."""
        return int(self.parent.shape[0])

    @property
    def mean_value(self) -> np.ndarray:
        """``[N]`` ``W / N`` for the player to move at each node (0 where never visited)."""
        return self.value_sum / np.maximum(self.visits, 1)

    def value_for_root_player(self) -> np.ndarray:
        """``[N]`` mean value seen by the player to move at the root (sign flips each level)."""
        return self.mean_value * np.where(self.depth % 2 == 0, 1.0, -1.0)

    def child_stats(self, node: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Visits, Q and prior of every move at a node, from the node's mover's point of view.

        Returns:
            ``(visits [A], q [A], prior [A])``; visits and Q are 0 for moves never tried.
        """
        kids = self.children[node]
        has = kids != self.UNVISITED
        safe = np.where(has, kids, 0)
        visits = np.where(has, self.visits[safe], 0)
        q = np.where(has, -self.value_sum[safe] / np.maximum(visits, 1), 0.0)
        return visits, q, self.children_prior[node]


@dataclass(frozen=True)
class RootSummary:
    """What the search says about each legal move at the root.

    Attributes:
        moves: ``[K]`` the legal moves.
        visits: ``[K]`` root visits that went through each move.
        q: ``[K]`` mean value of each move for the player to move at the root.
        prior: ``[K]`` prior probability of each move.
        chosen: The move search plays: most visits, ties to the higher Q, then the lower move.
    """

    moves: np.ndarray  # [K] int
    visits: np.ndarray  # [K] int
    q: np.ndarray  # [K] float64
    prior: np.ndarray  # [K] float64
    chosen: int


@dataclass(frozen=True, eq=False)
class SearchTrace:
    """A finished search: the final tree and a record of every iteration.

    Iterations are numbered 1..T; row ``t - 1`` of each record belongs to iteration ``t``.
    Paths are padded with ``NO_NODE`` (-1) after ``path_length`` nodes.

    Attributes:
        game: The game's name.
        root_state: The root's position in the game's table.
        rule: "uct" or "puct".
        c: The exploration constant.
        prior: Name of the prior ("uniform", "solver", "misleading", or "custom").
        seed: Seed of the Generator behind tie-breaking and playouts.
        tree: The tree after the last iteration.
        path: ``[T, L + 1]`` nodes from the root to the leaf of each iteration (the leaf is
            the new node, or a finished game already in the tree).
        path_length: ``[T]`` nodes on each path.
        expanded: ``[T]`` the node each iteration added, ``NO_NODE`` when the path ended in a
            finished game already in the tree.
        leaf_value: ``[T]`` result of the simulation for the player to move at the leaf.
        rollout: ``[T, L]`` moves of each random playout, -1 padded (none when the leaf is a
            finished game).
        backed_up: ``[T, L + 1]`` the value added to each path node's ``value_sum`` (for the
            player to move there); 0 padded.
    """

    game: str
    root_state: int
    rule: str
    c: float
    prior: str
    seed: int
    tree: Tree
    path: np.ndarray  # [T, L + 1] int32
    path_length: np.ndarray  # [T] int16
    expanded: np.ndarray  # [T] int32
    leaf_value: np.ndarray  # [T] float64
    rollout: np.ndarray  # [T, L] int16
    backed_up: np.ndarray  # [T, L + 1] float64

    @property
    def iterations(self) -> int:
        """Number of iterations T."""
        return int(self.path.shape[0])

    def n_nodes_after(self, t: int) -> int:
        """Nodes in the tree after iteration ``t`` (1 + the expansions so far)."""
        return 1 + int((self.expanded[:t] != NO_NODE).sum())

    def snapshot(self, t: int) -> Tree:
        """The tree as it stood after iteration ``t`` (0 is the bare root).

        It is rebuilt from the iteration records alone, not from the final tree's statistics.

        Raises:
            ValueError: If ``t`` is not in [0, T].
        """
        if not 0 <= t <= self.iterations:
            raise ValueError(f"iteration must be in [0, {self.iterations}]; got {t}")
        n = self.n_nodes_after(t)
        paths = self.path[:t]
        on_path = paths != NO_NODE
        nodes = paths[on_path]
        visits = np.bincount(nodes, minlength=n).astype(np.int64)
        value_sum = np.bincount(nodes, weights=self.backed_up[:t][on_path], minlength=n)
        final = self.tree
        children = final.children[:n]
        children = np.where(children < n, children, Tree.UNVISITED).astype(np.int32)
        return Tree(
            parent=final.parent[:n], move=final.move[:n], depth=final.depth[:n],
            state=final.state[:n], visits=visits, value_sum=value_sum.astype(np.float64),
            prior=final.prior[:n], children=children, children_prior=final.children_prior[:n],
            legal=final.legal[:n], terminal=final.terminal[:n], created=final.created[:n],
        )

    def summary(self, t: int | None = None) -> RootSummary:
        """Visits, Q and prior of each root move after iteration ``t`` (default: the end)."""
        tree = self.tree if t is None or t == self.iterations else self.snapshot(t)
        root = Tree.ROOT_INDEX
        moves = np.flatnonzero(tree.legal[root])
        visits, q, prior = tree.child_stats(root)
        visits, q, prior = visits[moves], q[moves], prior[moves]
        order = np.lexsort((moves, -q, -visits))
        return RootSummary(moves=moves, visits=visits, q=q, prior=prior,
                           chosen=int(moves[order[0]]))

    def root_history(self) -> tuple[np.ndarray, np.ndarray]:
        """Root visits and value sums per move after each iteration.

        Returns:
            ``(visits [T + 1, A], value_sum [T + 1, A])``, row ``t`` after iteration ``t``;
            ``value_sum / visits`` is the move's Q for the player to move at the root.
        """
        n_moves = self.tree.children.shape[1]
        first = self.path[:, 1]
        moves = self.tree.move[first]
        visits = np.zeros((self.iterations + 1, n_moves), dtype=np.int64)
        value = np.zeros((self.iterations + 1, n_moves), dtype=np.float64)
        rows = np.arange(1, self.iterations + 1)
        visits[rows, moves] = 1
        value[rows, moves] = -self.backed_up[:, 1]
        return np.cumsum(visits, axis=0), np.cumsum(value, axis=0)

    def node_history(
        self, nodes: np.ndarray, iterations: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Visits and value sums of chosen nodes after each of chosen iterations.

        Args:
            nodes: ``[V]`` node indices.
            iterations: ``[F]`` increasing iterations in [0, T].

        Returns:
            ``(visits [F, V], value_sum [F, V])``; a node not yet added has zeros.
        """
        nodes = np.asarray(nodes, dtype=np.int64)
        iterations = np.asarray(iterations, dtype=np.int64)
        slot = np.full(self.tree.n_nodes, -1, dtype=np.int64)
        slot[nodes] = np.arange(nodes.size)
        # Iteration t counts in every frame f with iterations[f] >= t.
        frame = np.searchsorted(iterations, np.arange(1, self.iterations + 1), side="left")
        frames = np.broadcast_to(frame[:, None], self.path.shape)
        where = (self.path != NO_NODE) & (frames < iterations.size)
        where &= slot[np.where(where, self.path, 0)] >= 0
        flat = frames[where] * nodes.size + slot[self.path[where]]
        size = iterations.size * nodes.size
        visits = np.bincount(flat, minlength=size).reshape(iterations.size, nodes.size)
        value = np.bincount(flat, weights=self.backed_up[where], minlength=size)
        value = value.reshape(iterations.size, nodes.size)
        return np.cumsum(visits, axis=0), np.cumsum(value, axis=0)


def prior_table(
    table: GameTable, solution: Solution, kind: str, *, temperature: float = 0.5
) -> np.ndarray:
    r"""Prior probabilities of every move in every position.

    * ``uniform``: ``1 / (number of legal moves)``.
    * ``solver``: the exact move values softened, ``P(a) \propto exp(v^*(s, a) / \tau)``,
      a stand-in for a well-trained policy network.
    * ``misleading``: ``P(a) \propto exp(-v^*(s, a) / \tau)``, most mass on the worst moves.

    Args:
        table: The game's positions.
        solution: Its exact solution.
        kind: One of ``PRIORS``.
        temperature: ``\tau > 0``; larger is closer to uniform.

    Returns:
        ``[S, A]`` probabilities summing to 1 over the legal moves of each unfinished position
        (rows of finished games are 0).

    Raises:
        ValueError: For an unknown kind or a temperature that is not positive.
    """
    if kind not in PRIORS:
        raise ValueError(f"prior must be one of {', '.join(PRIORS)}; got {kind!r}")
    if not (math.isfinite(temperature) and temperature > 0):
        raise ValueError(f"the prior's temperature must be positive; got {temperature}")
    legal = table.legal
    if kind == "uniform":
        logits = np.zeros(legal.shape)
    else:
        sign = 1.0 if kind == "solver" else -1.0
        logits = sign * np.nan_to_num(solution.move_value) / temperature
    logits = np.where(legal, logits, -np.inf)
    top = np.max(logits, axis=1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    weights = np.where(legal, np.exp(logits - top), 0.0)
    total = weights.sum(axis=1, keepdims=True)
    return weights / np.where(total > 0, total, 1.0)


def _check_prior(table: GameTable, prior: np.ndarray) -> np.ndarray:
    p = np.asarray(prior, dtype=np.float64)
    if p.shape != table.next_state.shape:
        raise ValueError(f"a prior table must have shape {table.next_state.shape}; got {p.shape}")
    if not np.isfinite(p).all() or (p < 0).any():
        raise ValueError("prior probabilities must be finite and non-negative")
    if (p[~table.legal] != 0).any():
        raise ValueError("a prior may give probability only to legal moves")
    sums = p.sum(axis=1)
    if not np.allclose(sums[~table.terminal], 1.0, atol=1e-9):
        raise ValueError("prior probabilities must sum to 1 over the legal moves")
    return p


def search(
    game: Game,
    state: int,
    *,
    simulations: int,
    c: float = 1.4,
    rule: str = "uct",
    prior: str | np.ndarray = "uniform",
    seed: int = 0,
    temperature: float = 0.5,
) -> SearchTrace:
    r"""Run Monte Carlo tree search from a position and record every iteration.

    Selection maximises, over the legal moves ``a`` of node ``s``,

    .. math::
        \text{UCT: } Q(s,a) + c\sqrt{\frac{\ln N(s)}{N(s,a)}}, \qquad
        \text{PUCT: } Q(s,a) + c\,P(s,a)\frac{\sqrt{N(s)}}{1 + N(s,a)},

    with ``Q(s, a) = -W(s') / N(s')`` for the child ``s'`` (negamax: the child's values are for
    the other player). UCT tries untried moves first; PUCT counts them as ``Q = 0``. The new
    leaf is valued by one uniformly random playout, and the result ``z`` (for the player to
    move at the leaf) is backed up as ``W \leftarrow W + (-1)^k z`` at the node ``k`` levels
    above the leaf, with ``N \leftarrow N + 1``.

    Sources: Kocsis & Szepesvári (2006), "Bandit based Monte-Carlo planning" (UCT); Browne et
    al. (2012), "A survey of Monte Carlo tree search methods", Alg. 2-3; Silver et al. (2017),
    "Mastering the game of Go without human knowledge" (PUCT).

    Args:
        game: The game (its ``table`` of positions and exact ``solution``).
        state: The root's position in ``game.table``; the game must not be over there.
        simulations: Iterations ``T`` to run, in [1, ``MAX_SIMULATIONS``].
        c: Exploration constant ``c >= 0`` (0 is greedy on Q).
        rule: "uct" or "puct".
        prior: For PUCT: a name in ``PRIORS`` (see ``prior_table``) or an ``[S, A]`` table.
            UCT ignores it.
        seed: Seed of the Generator for tie-breaking and playouts.
        temperature: Temperature of the named "solver" and "misleading" priors.

    Returns:
        The final tree and a record of every iteration.

    Raises:
        ValueError: For settings out of range, an unknown rule or prior, or a finished game.
    """
    table = game.table
    if rule not in RULES:
        raise ValueError(f"rule must be one of {', '.join(RULES)}; got {rule!r}")
    if isinstance(simulations, bool) or not isinstance(simulations, int | np.integer):
        raise ValueError(f"simulations must be a whole number; got {simulations!r}")
    if not 1 <= simulations <= MAX_SIMULATIONS:
        raise ValueError(f"simulations must be in [1, {MAX_SIMULATIONS}]; got {simulations}")
    c = float(c)
    if not (math.isfinite(c) and 0 <= c <= 100):
        raise ValueError(f"the exploration constant c must be in [0, 100]; got {c}")
    if not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed must be a non-negative whole number; got {seed!r}")
    if not 0 <= int(state) < table.n_states:
        raise ValueError(f"state must index the game's {table.n_states} positions; got {state}")
    state = int(state)
    if table.terminal[state]:
        raise InputError("The game is already over in this position; there is nothing to search.")
    if isinstance(prior, str):
        prior_name = prior if rule == "puct" else "uniform"
        priors = prior_table(table, game.solution, prior_name, temperature=temperature)
    else:
        prior_name = "custom" if rule == "puct" else "uniform"
        priors = _check_prior(table, prior)
        if rule == "uct":
            priors = prior_table(table, game.solution, "uniform")

    moves_of, nexts_of, outcome = table.successors
    horizon = table.max_plies
    rng = np.random.default_rng(seed)
    # One uniform number per decision: columns [0, L) break ties while selecting at each depth,
    # columns [L, 2L) pick the moves of the random playout.
    uniforms = rng.random((simulations, 2 * horizon)).tolist()
    prior_rows = priors.tolist()

    puct = rule == "puct"
    inf = math.inf
    log, sqrt = math.log, math.sqrt
    # Node arrays as plain lists while the tree grows (appending is O(1)).
    parent, move, depth, node_state = [NO_NODE], [-1], [0], [state]
    visits, value_sum, node_prior, created = [0], [0.0], [1.0], [0]
    kids = [[NO_NODE] * len(moves_of[state])]  # children aligned with moves_of[state]
    kid_prior = [[prior_rows[state][a] for a in moves_of[state]]]
    paths: list[list[int]] = []
    expanded: list[int] = []
    leaf_values: list[float] = []
    rollouts: list[list[int]] = []

    for t in range(1, simulations + 1):
        u = uniforms[t - 1]
        node, d = 0, 0
        path = [0]
        playout: list[int] = []
        new = NO_NODE
        while True:
            s = node_state[node]
            legal = moves_of[s]
            if not legal:  # a finished game already in the tree: its value is known
                z = outcome[s]
                break
            ks = kids[node]
            best, ties = -inf, []
            if puct:
                ps = kid_prior[node]
                root_n = sqrt(visits[node])
                for k, ch in enumerate(ks):
                    if ch == NO_NODE:
                        score = c * ps[k] * root_n
                    else:
                        n = visits[ch]
                        score = -value_sum[ch] / n + c * ps[k] * root_n / (1 + n)
                    if score > best:
                        best, ties = score, [k]
                    elif score == best:
                        ties.append(k)
            else:
                log_n = log(visits[node]) if visits[node] > 0 else 0.0
                for k, ch in enumerate(ks):
                    if ch == NO_NODE:
                        score = inf
                    else:
                        n = visits[ch]
                        score = -value_sum[ch] / n + c * sqrt(log_n / n)
                    if score > best:
                        best, ties = score, [k]
                    elif score == best:
                        ties.append(k)
            k = ties[0] if len(ties) == 1 else ties[int(u[d] * len(ties))]
            d += 1
            child = ks[k]
            if child != NO_NODE:
                node = child
                path.append(child)
                continue
            # Expand: add the node the chosen move leads to.
            s2 = nexts_of[s][k]
            new = len(visits)
            ks[k] = new
            parent.append(node)
            move.append(legal[k])
            depth.append(d)
            node_state.append(s2)
            visits.append(0)
            value_sum.append(0.0)
            node_prior.append(kid_prior[node][k])
            created.append(t)
            kids.append([NO_NODE] * len(moves_of[s2]))
            kid_prior.append([prior_rows[s2][a] for a in moves_of[s2]])
            path.append(new)
            # Simulate: uniformly random moves to the end of the game.
            sign, j, s = 1, horizon, s2
            while moves_of[s]:
                options = moves_of[s]
                i = int(u[j] * len(options))
                playout.append(options[i])
                s = nexts_of[s][i]
                sign = -sign
                j += 1
            z = sign * outcome[s]
            break
        # Back up: the result for the leaf's mover, negated at every level above it.
        v = float(z)
        for n in reversed(path):
            visits[n] += 1
            value_sum[n] += v
            v = -v
        paths.append(path)
        expanded.append(new)
        leaf_values.append(float(z))
        rollouts.append(playout)

    return _trace(
        game, table, priors, state, rule, c, prior_name, int(seed),
        (parent, move, depth, node_state, visits, value_sum, node_prior, created),
        paths, expanded, leaf_values, rollouts,
    )


def _trace(game, table, priors, root, rule, c, prior_name, seed, nodes, paths, expanded,
           leaf_values, rollouts) -> SearchTrace:
    """Pack the lists the search grew into a ``SearchTrace`` of arrays."""
    parent, move, depth, node_state, visits, value_sum, node_prior, created = nodes
    parent = np.array(parent, dtype=np.int32)
    move = np.array(move, dtype=np.int16)
    n_nodes, n_moves, horizon = len(parent), table.n_moves, table.max_plies
    children = np.full((n_nodes, n_moves), Tree.UNVISITED, dtype=np.int32)
    children[parent[1:], move[1:]] = np.arange(1, n_nodes, dtype=np.int32)
    node_state = np.array(node_state, dtype=np.int32)
    tree = Tree(
        parent=parent, move=move, depth=np.array(depth, dtype=np.int16), state=node_state,
        visits=np.array(visits, dtype=np.int64), value_sum=np.array(value_sum, dtype=np.float64),
        prior=np.array(node_prior, dtype=np.float64), children=children,
        children_prior=priors[node_state], legal=table.legal[node_state],
        terminal=table.terminal[node_state], created=np.array(created, dtype=np.int32),
    )
    n_iter = len(paths)
    lengths = np.array([len(p) for p in paths], dtype=np.int16)
    path = np.full((n_iter, horizon + 1), NO_NODE, dtype=np.int32)
    cols = np.arange(horizon + 1)
    mask = cols[None, :] < lengths[:, None]
    path[mask] = np.concatenate(paths)
    z = np.array(leaf_values, dtype=np.float64)
    # The value added k levels above the leaf is (-1)^k z.
    levels_above = lengths[:, None] - 1 - cols[None, :]
    backed = np.where(mask, z[:, None] * np.where(levels_above % 2 == 0, 1.0, -1.0), 0.0)
    roll = np.full((n_iter, horizon), -1, dtype=np.int16)
    roll_len = np.array([len(r) for r in rollouts])
    if roll_len.sum():
        roll[np.arange(horizon)[None, :] < roll_len[:, None]] = np.concatenate(
            [r for r in rollouts if r]
        )
    return SearchTrace(
        game=game.name, root_state=root, rule=rule, c=c, prior=prior_name, seed=seed,
        tree=tree, path=path, path_length=lengths,
        expanded=np.array(expanded, dtype=np.int32), leaf_value=z, rollout=roll,
        backed_up=backed,
    )


# ------------------------------------------------------------------------- reading a search
@dataclass(frozen=True)
class SelectionStep:
    """The choice made at one node of a path: every legal move's score at that moment.

    Attributes:
        node: The node where the choice was made.
        moves: ``[K]`` its legal moves.
        visits: ``[K]`` ``N(s, a)`` before this iteration.
        q: ``[K]`` ``Q(s, a)`` for the node's mover (0 for untried moves).
        bonus: ``[K]`` the exploration term (``+inf`` for an untried move under UCT).
        score: ``[K]`` ``q + bonus``.
        chosen: The move taken.
    """

    node: int
    moves: np.ndarray  # [K]
    visits: np.ndarray  # [K]
    q: np.ndarray  # [K]
    bonus: np.ndarray  # [K]
    score: np.ndarray  # [K]
    chosen: int


def selection_scores(tree: Tree, node: int, *, rule: str, c: float) -> SelectionStep:
    """The selection score of every legal move at a node of a tree (vectorised).

    The same formulas as ``search`` (see there); ``chosen`` is the first highest-scoring move
    (search breaks ties at random, so with ties it may have taken another).

    Raises:
        ValueError: For an unknown rule or a node whose game is over.
    """
    if rule not in RULES:
        raise ValueError(f"rule must be one of {', '.join(RULES)}; got {rule!r}")
    moves = np.flatnonzero(tree.legal[node])
    if moves.size == 0:
        raise ValueError("the game is over at this node; nothing is selected there")
    visits, q, prior = tree.child_stats(node)
    visits, q, prior = visits[moves], q[moves], prior[moves]
    tried = visits > 0
    if rule == "uct":
        log_n = math.log(tree.visits[node]) if tree.visits[node] > 0 else 0.0
        with np.errstate(divide="ignore"):
            bonus = np.where(tried, c * np.sqrt(log_n / np.maximum(visits, 1)), np.inf)
    else:
        root_n = math.sqrt(tree.visits[node])
        bonus = c * prior * root_n / (1 + visits)
    score = q + bonus
    return SelectionStep(node=int(node), moves=moves, visits=visits, q=q, bonus=bonus,
                         score=score, chosen=int(moves[np.argmax(score)]))


@dataclass(frozen=True)
class IterationView:
    """One iteration taken apart into its four phases, for explaining it step by step.

    Attributes:
        iteration: ``t`` in [1, T].
        before: The tree after iteration ``t - 1``.
        after: The tree after iteration ``t``.
        path: ``[D + 1]`` nodes from the root to the leaf (numbered as in ``after``).
        steps: The selection at each node of the path but the leaf.
        expanded: The node added (``NO_NODE`` if the path ended in a finished game).
        rollout: The moves of the random playout.
        leaf_value: The simulation result for the player to move at the leaf.
        backed_up: ``[D + 1]`` the value added to each path node (for its player to move).
    """

    iteration: int
    before: Tree
    after: Tree
    path: np.ndarray
    steps: tuple[SelectionStep, ...]
    expanded: int
    rollout: np.ndarray
    leaf_value: float
    backed_up: np.ndarray


def iteration_view(trace: SearchTrace, t: int) -> IterationView:
    """Take iteration ``t`` of a search apart into select, expand, simulate and back up.

    Raises:
        ValueError: If ``t`` is not in [1, T].
    """
    if not 1 <= t <= trace.iterations:
        raise ValueError(f"iteration must be in [1, {trace.iterations}]; got {t}")
    before, after = trace.snapshot(t - 1), trace.snapshot(t)
    length = int(trace.path_length[t - 1])
    path = trace.path[t - 1, :length]
    steps = tuple(
        replace(
            selection_scores(before, int(n), rule=trace.rule, c=trace.c),
            chosen=int(trace.tree.move[path[i + 1]]),
        )
        for i, n in enumerate(path[:-1])
    )
    roll = trace.rollout[t - 1]
    return IterationView(
        iteration=t, before=before, after=after, path=path, steps=steps,
        expanded=int(trace.expanded[t - 1]), rollout=roll[roll >= 0],
        leaf_value=float(trace.leaf_value[t - 1]), backed_up=trace.backed_up[t - 1, :length],
    )


# ------------------------------------------------------------------------- layered layout
@dataclass(frozen=True)
class TreeLayout:
    """Where to draw a growing tree: one layer per depth, parents above their children.

    Positions are fixed for the whole search, so a node stays put while the tree grows around
    it; which nodes are drawn is decided separately at each chosen moment.

    Attributes:
        nodes: ``[V]`` the nodes drawn at some moment, in depth-first order (children by move).
        x: ``[V]`` horizontal position; leaves one unit apart, a parent centred over the span
            of its drawn children.
        y: ``[V]`` ``-depth``.
        parent_slot: ``[V]`` position of each node's parent in ``nodes`` (-1 for the root).
        moments: ``[F]`` the iterations the layout serves, increasing.
        shown: ``[F, V]`` whether each node is drawn after each of those iterations.
        visits: ``[F, V]`` its visits then.
        value_sum: ``[F, V]`` its value sum then (for the player to move at the node).
        hidden: ``[F, V]`` its children that existed then but are not drawn.
        n_nodes: ``[F]`` nodes in the whole tree then.
    """

    nodes: np.ndarray  # [V] int
    x: np.ndarray  # [V] float64
    y: np.ndarray  # [V] float64
    parent_slot: np.ndarray  # [V] int
    moments: np.ndarray  # [F] int
    shown: np.ndarray  # [F, V] bool
    visits: np.ndarray  # [F, V] int
    value_sum: np.ndarray  # [F, V] float64
    hidden: np.ndarray  # [F, V] int
    n_nodes: np.ndarray  # [F] int

    def moment(self, t: int) -> int:
        """Row of iteration ``t`` in the per-moment arrays.

        Raises:
            ValueError: If the layout was not made for iteration ``t``.
        """
        row = int(np.searchsorted(self.moments, t))
        if row >= self.moments.size or self.moments[row] != t:
            raise ValueError(f"the layout was not made for iteration {t}")
        return row


def _close_under_parents(shown: np.ndarray, parent: np.ndarray, depth: np.ndarray) -> None:
    """Drop (in place) every node whose parent is not shown; ``shown`` is ``[F, N]``."""
    for d in range(1, int(depth.max()) + 1):
        layer = np.flatnonzero(depth == d)
        shown[:, layer] &= shown[:, parent[layer]]


def tree_layout(
    trace: SearchTrace,
    iterations: np.ndarray | list[int],
    *,
    max_depth: int = 4,
    top_k: int = 3,
    max_nodes: int = 400,
    keep: np.ndarray | None = None,
    anchors: np.ndarray | list[int] | None = None,
) -> TreeLayout:
    """Choose the nodes worth drawing at several moments of a search and lay them out in layers.

    After iteration ``t`` a node is drawn when it exists, is at most ``max_depth`` below the
    root, is among the ``top_k`` most visited children of its parent (ties to the lower move),
    and its parent is drawn; nodes in ``keep`` (e.g. the path of the iteration on show) are
    drawn whenever they exist, within the depth limit. One layout holds every node drawn at
    any of the moments, so positions never jump between moments. With ``anchors``, the layout
    holds only the nodes drawn at those moments, and every moment shows those of them that
    exist by then: the anchors' drawing, growing. If more than ``max_nodes``
    qualify, the most visited at the last moment are kept (ancestors first). Leaves sit one
    unit apart in depth-first order and each parent midway over its drawn children: the
    layered "tidy tree" of Reingold & Tilford (1981) in its simplest form. Everything is
    vectorised over nodes and moments; the only loops run over depths.

    Args:
        trace: The search.
        iterations: Moments to serve, in [0, T] (duplicates are dropped).
        max_depth: Deepest layer drawn (>= 0).
        top_k: Children drawn per node (>= 1).
        max_nodes: Most nodes in the layout (>= 1).
        keep: Nodes to draw whatever their rank.
        anchors: The moments whose drawings decide which nodes the layout holds (a subset of
            ``iterations``); None for all.

    Returns:
        The layout and, per moment, what is drawn and its statistics.

    Raises:
        ValueError: For limits or iterations out of range.
    """
    if max_depth < 0 or top_k < 1 or max_nodes < 1:
        raise ValueError("need max_depth >= 0, top_k >= 1 and max_nodes >= 1")
    moments = np.unique(np.asarray(iterations, dtype=np.int64))
    if moments.size == 0 or moments[0] < 0 or moments[-1] > trace.iterations:
        raise ValueError(f"iterations must lie in [0, {trace.iterations}]")
    tree = trace.tree
    n, n_f = tree.n_nodes, moments.size
    parent = np.maximum(tree.parent.astype(np.int64), 0)
    depth = tree.depth.astype(np.int64)
    visits, value_sum = trace.node_history(np.arange(n), moments)  # [F, N]
    exists = tree.created[None, :] <= moments[:, None]

    # Rank among siblings at every moment at once: group by (moment, parent); the root is
    # alone in its group.
    sibling_group = np.where(np.arange(n) == Tree.ROOT_INDEX, n, parent)
    group = (np.arange(n_f)[:, None] * (n + 1) + sibling_group[None, :]).ravel()
    order = np.lexsort((np.tile(tree.move, n_f), -visits.ravel(), group))
    sorted_group = group[order]
    starts = np.r_[0, np.flatnonzero(np.diff(sorted_group)) + 1]
    first = np.repeat(starts, np.diff(np.r_[starts, order.size]))
    rank = np.empty(order.size, dtype=np.int64)
    rank[order] = np.arange(order.size) - first
    shallow = depth <= max_depth
    wanted = exists & (rank.reshape(n_f, n) < top_k) & shallow[None, :]
    if keep is not None:
        kept = np.zeros(n, dtype=bool)
        kept[np.asarray(keep, dtype=np.int64)] = True
        wanted |= exists & (kept & shallow)[None, :]
    wanted[:, Tree.ROOT_INDEX] = True
    _close_under_parents(wanted, parent, depth)
    if anchors is None:
        union = wanted.any(axis=0)
    else:
        rows = np.searchsorted(moments, np.asarray(anchors, dtype=np.int64))
        if (rows >= n_f).any() or (moments[np.minimum(rows, n_f - 1)] != anchors).any():
            raise ValueError("anchors must be among the iterations")
        union = wanted[rows].any(axis=0)
        # The anchors' drawing, growing: at every moment, the nodes of it that exist then.
        wanted = exists & union[None, :]
    if union.sum() > max_nodes:
        candidates = np.flatnonzero(union)
        priority = candidates[np.lexsort((depth[candidates], -visits[-1, candidates]))]
        chosen = np.zeros(n, dtype=bool)
        if keep is not None:
            chosen |= kept & union
        spare = max_nodes - int(chosen.sum())
        chosen[priority[~chosen[priority]][:max(spare, 0)]] = True
        wanted &= chosen[None, :]
        _close_under_parents(wanted, parent, depth)
        union = wanted.any(axis=0)
    nodes = np.flatnonzero(union)

    # Depth-first order: sort by the sequence of moves from the root.
    horizon = int(depth.max()) + 1
    seq = np.full((n, max(horizon - 1, 1)), -1, dtype=np.int64)
    for d in range(1, horizon):
        layer = np.flatnonzero(depth == d)
        seq[layer] = seq[parent[layer]]
        seq[layer, d - 1] = tree.move[layer]
    nodes = nodes[np.lexsort(seq[nodes].T[::-1])]

    slot = np.full(n, -1, dtype=np.int64)
    slot[nodes] = np.arange(nodes.size)
    parent_slot = np.where(nodes == Tree.ROOT_INDEX, -1, slot[parent[nodes]])
    has_drawn_child = np.bincount(parent_slot[parent_slot >= 0], minlength=nodes.size) > 0
    x = np.zeros(nodes.size)
    x[~has_drawn_child] = np.arange(int((~has_drawn_child).sum()), dtype=np.float64)
    node_depth = depth[nodes]
    lo = np.where(has_drawn_child, np.inf, x)
    hi = np.where(has_drawn_child, -np.inf, x)
    for d in range(int(node_depth.max()), 0, -1):
        kids = np.flatnonzero(node_depth == d)
        np.minimum.at(lo, parent_slot[kids], x[kids])
        np.maximum.at(hi, parent_slot[kids], x[kids])
        inner = np.flatnonzero((node_depth == d - 1) & has_drawn_child)
        x[inner] = (lo[inner] + hi[inner]) / 2

    # Children that existed but are not drawn, per moment.
    child_exists = exists[:, 1:].astype(np.int64)
    shown = wanted[:, nodes]
    flat_parent = (np.arange(n_f)[:, None] * n + parent[None, 1:]).ravel()
    n_children = np.bincount(flat_parent, weights=child_exists.ravel(), minlength=n_f * n)
    n_children = n_children.reshape(n_f, n)[:, nodes].astype(np.int64)
    drawn_children = np.zeros((n_f, nodes.size), dtype=np.int64)
    child_slots = np.flatnonzero(parent_slot >= 0)
    np.add.at(drawn_children, (slice(None), parent_slot[child_slots]),
              shown[:, child_slots].astype(np.int64))
    n_total = 1 + np.cumsum(np.r_[0, trace.expanded != NO_NODE])[moments]
    return TreeLayout(
        nodes=nodes, x=x, y=-node_depth.astype(np.float64), parent_slot=parent_slot,
        moments=moments, shown=shown, visits=visits[:, nodes], value_sum=value_sum[:, nodes],
        hidden=n_children - drawn_children, n_nodes=n_total,
    )
