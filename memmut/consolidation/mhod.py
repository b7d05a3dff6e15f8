"""MHOD: Markov Host Overload Detection (Beloglazov & Buyya, "Managing
overloaded hosts for dynamic consolidation of virtual machines in cloud
data centers under quality of service constraints", TPDS 2013; Neat's
``neat.locals.overload.mhod``).

The host's utilization is mapped to states by ``state_config`` (one
threshold, 0.8: state 0 below it, state 1 — "overloaded" — at or above).
Transition probabilities ``p_ij`` are estimated from the history with the
multisize sliding-window method (Luiz et al.): for each previous state
``i`` a request window keeps the states that followed ``i``; for each
window size ``w`` the estimate of ``p_ij`` is the count of ``j`` in the
last ``w`` entries divided by ``w``; the variance of the last ``w``
estimates (1.0 until there are ``w``) is compared with the acceptable
variance ``p(1-p)/w``, and the largest window before the first one whose
variance exceeds it is selected (the smallest if none).

With ``m_i`` the probability of migrating a VM in state ``i``, the expected
time spent in each state before a migration is
``L = s (I - diag(1 - m) P)^-1`` (``s``: the current state as a vector).
MHOD maximizes ``sum L`` subject to the OTF constraint

    (T_m + t_N + L_N) / (T_m + t + sum L) <= otf

where ``T_m`` is the migration time in steps, ``t`` the steps observed and
``t_N`` those in the overloaded state, by brute force over ``m`` on a grid
of ``bruteforce_step``. As in Neat the decision is deterministic: migrate
when no ``m`` on the grid satisfies the constraint, and only once
``learning_steps`` values are known, the host is in the overloaded state
now and ``p_NN > 0``.

Differences from Neat's code, all deliberate: every (i, j, w) gets its own
estimate window (Neat's initialisers share one deque between them), a
utilization maps to the number of thresholds it reaches, and any number of
states works (Neat hard-codes the L functions of 2 states; for 2 states the
formulas here give the same values, see the unit tests).

The decide function keeps ``time_in_states`` and ``time_in_state_n`` (the
steps seen and those in the overloaded state) in its state, as Neat does.
"""

import itertools

import numpy as np

from memmut.consolidation import algorithm


def utilization_to_states(state_config, utilization):
    """State index of each utilization value (number of thresholds <= u)."""
    return np.searchsorted(np.asarray(state_config, dtype=float),
                           np.asarray(utilization, dtype=float),
                           side='right')


def _estimates(seq, j, w):
    """Estimates of p_ij with window w after each entry of ``seq``."""
    ind = (seq == j).astype(float)
    c = np.concatenate([[0.0], np.cumsum(ind)])
    k = np.arange(1, len(seq) + 1)
    lo = np.maximum(0, k - w)
    return (c[k] - c[lo]) / w


def estimate_transitions(states, number_of_states, window_sizes):
    """Multisize sliding-window estimates of the transition matrix.

    ``states``: the state history; the first transition is from state 0
    (Neat's convention). Returns ``(p, selected_windows)``.
    """
    states = np.asarray(states, dtype=int)
    window_sizes = sorted(int(w) for w in window_sizes)
    prev = np.concatenate([[0], states[:-1]])
    n = number_of_states
    p = np.zeros((n, n))
    selected = np.full((n, n), window_sizes[0], dtype=int)
    for i in range(n):
        seq = states[prev == i]
        if len(seq) == 0:
            continue
        for j in range(n):
            chosen = window_sizes[0]
            est_by_w = {}
            for w in window_sizes:
                est = _estimates(seq, j, w)
                est_by_w[w] = est
                last = est[-w:]
                if len(last) < w:
                    variance = 1.0
                else:
                    m = last.sum() / w
                    variance = float(((last - m) ** 2).sum() / (w - 1)) \
                        if w > 1 else 0.0
                e = est[-1]
                acceptable = e * (1.0 - e) / w
                if variance > acceptable:
                    break
                chosen = w
            selected[i, j] = chosen
            p[i, j] = est_by_w.get(chosen, _estimates(seq, j, chosen))[-1]
    return p, selected


def expected_times(state_vector, p, m):
    """L: expected steps in each state before a migration, or ``None``
    when infinite or undefined (singular system)."""
    s = np.asarray(state_vector, dtype=float)
    q = (1.0 - np.asarray(m, dtype=float))[:, None] * np.asarray(p, float)
    a = np.eye(len(s)) - q
    if abs(np.linalg.det(a)) < 1e-12:
        return None
    lv = np.linalg.solve(a.T, s)
    if not np.all(np.isfinite(lv)):
        return None
    return lv


def optimize(step, otf, migration_time, p, state_vector, time_in_states,
             time_in_state_n, limit=1.0):
    """Brute-force solution of MHOD's problem: the ``m`` maximizing
    ``sum L`` under the OTF constraint, or ``[]`` when none qualifies."""
    n = len(state_vector)
    grid = np.arange(0.0, limit + step / 2.0, step)
    grid = grid[grid <= limit + 1e-9]
    best, solution = 0.0, []
    for m in itertools.product(grid, repeat=n):
        lv = expected_times(state_vector, p, m)
        if lv is None:
            continue
        total = float(lv.sum())
        if not total > best:
            continue
        ratio = ((migration_time + time_in_state_n + lv[-1])
                 / (migration_time + time_in_states + total))
        if ratio <= otf:
            best, solution = total, [float(x) for x in m]
    return solution


def mhod(state_config, otf, window_sizes, bruteforce_step, learning_steps,
         time_step, migration_time, utilization, state):
    """One MHOD decision; returns ``(overloaded, new_state)``."""
    state = dict(state or {})
    state.setdefault('time_in_states', 0)
    state.setdefault('time_in_state_n', 0)
    if len(utilization) == 0:
        return False, state
    number_of_states = len(state_config) + 1
    states = utilization_to_states(state_config, utilization)
    p, _ = estimate_transitions(states, number_of_states, window_sizes)
    current = int(states[-1])
    state_n = number_of_states - 1
    state['time_in_states'] += 1
    if current == state_n:
        state['time_in_state_n'] += 1
    # Neat decides only in the overloaded state and once staying there has
    # been observed (p_NN > 0); elsewhere there is nothing to migrate for.
    if (len(utilization) >= learning_steps and current == state_n
            and p[state_n, state_n] > 0):
        vector = np.zeros(number_of_states)
        vector[current] = 1.0
        policy = optimize(bruteforce_step, otf,
                          float(migration_time) / time_step, p, vector,
                          state['time_in_states'], state['time_in_state_n'])
        return len(policy) == 0, state
    return False, state


@algorithm.parameters(
    state_config=[0.8],
    otf=0.1,
    window_sizes=[30, 40, 50, 60, 70, 80, 90, 100],
    bruteforce_step=0.5,
    learning_steps=10)
def mhod_factory(time_step, migration_time, params):
    state_config = [float(x) for x in params['state_config']]
    if sorted(state_config) != state_config or not state_config:
        raise ValueError('state_config must be increasing thresholds')
    otf = float(params['otf'])
    windows = [int(w) for w in params['window_sizes']]
    if not windows or min(windows) < 1:
        raise ValueError('window_sizes must be positive')
    step = float(params['bruteforce_step'])
    if not 0 < step <= 1:
        raise ValueError('bruteforce_step must be in (0, 1]')
    learning = int(params['learning_steps'])

    def decide(utilization, state=None):
        return mhod(state_config, otf, windows, step, learning,
                    time_step, migration_time, utilization, state)
    return decide


# neat.conf's parameters (its history_size is our history_length).
