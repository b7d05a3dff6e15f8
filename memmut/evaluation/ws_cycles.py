"""The working-set curve's cycles over a page-reference stream (issue 13):
the reads the agent takes with ``[badis] ws_curve`` and the allocation of
every round, for the curve's tests and its simulation benchmark.

The schedule is the agent's (memmut.agent.wss.badis_rounds): the accessed
state is cleared every ``rounds`` rounds, read at tau, 2 tau, ... before
the cycle's first round and at every round; each round's allocation is
:func:`~memmut.agent.wss.ws_curve.choose_cycle` of the running cycle and
the last complete one (``running_rule``), or, as before that rule, the
running cycle merged with the previous one's longer windows. The stream
sampler (:mod:`memmut.agent.wss.sampling.simulated`) plays the back-end:
every page (smaps) or ``sampled`` random pages (page_idle, kmod).
"""

import random

from memmut.agent.wss.sampling import simulated
from memmut.agent.wss import ws_curve
from memmut.evaluation import ref_streams


class _VM:
    uuid = 'vm'


def round_choices(pages, rate, guest_pages, round_s, rounds, bound_kb,
                  tau, until_s, running_rule=True, sampled=None, seed=0,
                  page_kb=4, fall_detect=False):
    """[(time, :class:`~memmut.agent.wss.ws_curve.Choice`)] of every
    round up to ``until_s``; the first cycle's clear at time 0."""
    g = simulated.ReferenceStream(ref_streams.timed(pages, rate),
                                  guest_pages)
    s = simulated.StreamSampler({_VM.uuid: g}, pages=sampled,
                                rng=random.Random(seed))
    span_kb = guest_pages * page_kb if sampled else None
    half_s = rounds * round_s / 2
    early = []
    a = tau
    while a < round_s * 0.999:
        early.append(a)
        a *= 2
    out = []
    prev = []
    start = 0.0
    while True:
        g.advance(start)
        s.begin(_VM, None)
        cur = []
        for a in early:
            g.advance(start + a)
            cur.append(ws_curve.read_of(s.peek(_VM, None)))
        for k in range(1, rounds + 1):
            t = start + k * round_s
            if t > until_s + 1e-9:
                return out
            g.advance(t)
            cur.append(ws_curve.read_of(s.peek(_VM, None)))
            if running_rule:
                c = ws_curve.choose_cycle(cur, prev, bound_kb, half_s,
                                          span_kb=span_kb,
                                          fall_detect=fall_detect,
                                          fall_min_age_s=2 * round_s)
            else:
                c = ws_curve.choose(ws_curve.merge(cur, prev), bound_kb,
                                    span_kb=span_kb)
            out.append((t, c))
        s.end(_VM, None)
        prev = ws_curve.monotone(cur)
        start += rounds * round_s
