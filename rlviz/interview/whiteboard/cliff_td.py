"""Q-learning, SARSA and Expected SARSA at a whiteboard: one transition, three targets."""

def td_targets(r, q_next, a_next, gamma, epsilon, terminal=False):
    """The three targets for one transition (s, a, r, s') and the next action a'."""
    g = 0.0 if terminal else gamma                   # no bootstrap from a terminal state
    greedy = q_next == q_next.max()
    pi = epsilon / len(q_next) + (1 - epsilon) * greedy / greedy.sum()  # ε-greedy in s'
    return {"q_learning": r + g * q_next.max(),      # off-policy: the best next action
            "sarsa": r + g * q_next[a_next],         # on-policy: the action actually taken
            "expected_sarsa": r + g * pi @ q_next}   # on-policy, in expectation


def td_update(q_sa, target, alpha):
    """Q(s, a) <- Q(s, a) + alpha (target - Q(s, a))."""
    return q_sa + alpha * (target - q_sa)


def live_check(settings):
    """The page's worked transition: the three targets and the SARSA update, here and in rlviz."""
    import numpy as np

    from rlviz import td
    from rlviz.interview.whiteboard import LiveCheck, setting

    q_next = np.array([setting(settings, f"wb_q{k}", v)
                       for k, v in enumerate((-3.0, -1.0, -4.0, -2.0))], dtype=float)
    q, r = float(setting(settings, "wb_q", -2.0)), float(setting(settings, "wb_r", -1.0))
    a, terminal = int(setting(settings, "wb_a", 0)), bool(setting(settings, "wb_terminal", False))
    gamma, eps = float(setting(settings, "wb_gamma", 0.9)), float(setting(settings, "wb_eps", 0.1))
    alpha = float(setting(settings, "wb_alpha", 0.5))
    board = td_targets(r, q_next, a, gamma, eps, terminal=terminal)
    lib = [td.q_learning_target(r, q_next, gamma=gamma, terminal=terminal),
           td.sarsa_target(r, q_next, a, gamma=gamma, terminal=terminal),
           td.expected_sarsa_target(r, q_next, gamma=gamma, epsilon=eps, terminal=terminal)]
    mine = [board["q_learning"], board["sarsa"], board["expected_sarsa"]]
    return LiveCheck("the worked transition's three targets and the SARSA update",
                     [*mine, td_update(q, mine[1], alpha)],
                     [*lib, td.td_update(q, lib[1], alpha)], tol=1e-12)
