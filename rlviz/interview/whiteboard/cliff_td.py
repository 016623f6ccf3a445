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
