"""Dynamic programming: the 30x30 slippery grid, its per-state loop reference, and the page.

``loop_sweeps`` is the plain reference the vectorised sweeps must equal element for element
(``tests/test_dp.py`` checks it); here it is timed for the speed-up ratio.
"""

import numpy as np

from benchmarks import case, page_rerun
from rlviz import dp
from rlviz.envs import gridworld
from rlviz.mdp import TabularMDP

BIG = "\n".join(["S" + "." * 29] + ["." * 30] * 28 + ["." * 29 + "G"])
GAMMA, THETA = 0.99, 1e-6


def loop_sweeps(
    mdp: TabularMDP,
    *,
    gamma: float,
    theta: float,
    in_place: bool,
    max_sweeps: int,
    policy: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Sweeps written state by state, as in Sutton & Barto's pseudocode (section 4.1 and 4.4).

    Returns ``values [K+1, S]`` and ``deltas [K]``. With ``policy`` None the backup is the max
    over actions (value iteration); otherwise the policy-weighted sum (policy evaluation).
    """
    next_state, gamma_prob, reward = mdp.next_state, gamma * mdp.prob, mdp.R
    v = np.zeros(mdp.n_states)
    history, deltas = [v.copy()], []
    for _ in range(max_sweeps):
        old = v.copy()
        source = v if in_place else old  # in place, later states read this sweep's values
        for s in range(mdp.n_states):
            q = reward[s] + (gamma_prob[s] * source[next_state[s]]).sum(axis=-1)
            v[s] = q.max() if policy is None else (policy[s] * q).sum()
        delta = float(np.max(np.abs(v - old)))
        history.append(v.copy())
        deltas.append(delta)
        if delta < theta:
            break
    return np.stack(history), np.asarray(deltas)


def big_grid() -> TabularMDP:
    return gridworld(BIG, slip=0.2, step_reward=0.0, goal_reward=1.0)


MDP = big_grid()


@case("30x30 slippery grid, VI γ=0.99 θ=1e-6, full history", group="dp", budget=0.3,
      reference=lambda: loop_sweeps(MDP, gamma=GAMMA, theta=THETA, in_place=False,
                                    max_sweeps=10_000),
      min_ratio=10, reference_repeat=3)
def vi_synchronous():
    return dp.value_iteration(MDP, gamma=GAMMA, theta=THETA)


@case("30x30 slippery grid, VI in place, full history", group="dp", budget=0.3,
      reference=lambda: loop_sweeps(MDP, gamma=GAMMA, theta=THETA, in_place=True,
                                    max_sweeps=10_000),
      min_ratio=5, reference_repeat=3)
def vi_in_place():
    return dp.value_iteration(MDP, gamma=GAMMA, theta=THETA, in_place=True)


@case("30x30 slippery grid, policy iteration", group="dp")
def pi_synchronous():
    return dp.policy_iteration(MDP, gamma=GAMMA, theta=THETA)


# The page's heaviest combinations of its caps (custom layouts up to 400 cells, 2000 sweeps,
# θ down to 1e-10, as many gymnasium episodes as fit in the check's step budget): within 2 s on
# a quiet machine. The sweeps-against-γ chart is drawn below the main view, after it, one γ at a
# time (a spinner names the work), so it is timed as its own case.
NO_GOAL = "\n".join(["S" + "." * 19] + ["." * 20] * 19)
GAMMAS = (0.5, 0.8, 0.9, 0.95, 0.98, 0.99, 1.0)
WORST = dict(slip=0.2, step_reward=-1.0, goal_reward=0.0, layout=NO_GOAL)


@case("page worst: 20x20 custom without a goal, PI in place, γ=1, 2000 sweeps, θ=1e-10",
      group="dp", budget=2.0, repeat=1)
def worst_custom():
    mdp = dp.make_problem("custom", **WORST)
    trace = dp.policy_iteration(mdp, gamma=1.0, theta=1e-10, in_place=True, max_sweeps=2000)
    return dp.compare_with_exact(mdp, trace)


@case("page worst: the same layout's sweeps-against-γ chart (7 γ, both sweep orders)",
      group="dp", budget=2.0, repeat=1, note="drawn after the main view, a γ at a time")
def worst_custom_gamma_chart():
    return dp.join_sweeps([
        dp.sweeps_by_gamma(dp.make_problem("custom", **WORST), (g,),
                           algorithm="policy_iteration", theta=1e-10, max_sweeps=2000)
        for g in GAMMAS])


@case("page worst: FrozenLake 8x8, γ=1, θ=1e-10, all the episodes the check allows",
      group="dp", budget=2.0, repeat=1)
def worst_frozen_lake():
    problem = dp.PROBLEMS["frozen_lake_8x8"]
    kwargs = dict(slip=problem.slip, step_reward=0.0, goal_reward=1.0)
    mdp = dp.make_problem("frozen_lake_8x8", **kwargs)
    trace = dp.policy_iteration(mdp, gamma=1.0, theta=1e-10, in_place=True, max_sweeps=2000)
    curve = dp.sweeps_by_gamma(mdp, GAMMAS, algorithm="policy_iteration", theta=1e-10,
                               max_sweeps=2000)
    actions = trace.greedy_actions.tolist()
    episodes = dp.episodes_within_budget(dp.expected_episode_length(mdp, actions))
    check = dp.greedy_rollouts("FrozenLake-v1", problem.gym_kwargs(**kwargs), actions,
                               gamma=1.0, episodes=episodes, seed=0)
    return dp.compare_with_exact(mdp, trace), curve, check


page_rerun("value_iteration")
