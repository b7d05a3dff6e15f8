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

import dataclasses
import random

from memmut.agent.wss.sampling import simulated
from memmut.agent.wss import short_set
from memmut.agent.wss import ws_curve
from memmut.evaluation import ref_streams


class _VM:
    uuid = 'vm'


def round_choices(pages, rate, guest_pages, round_s, rounds, bound_kb,
                  tau, until_s, running_rule=True, sampled=None, seed=0,
                  page_kb=4, fall_detect=False, short_rounds=0,
                  short_pages=200, events=None):
    """[(time, :class:`~memmut.agent.wss.ws_curve.Choice`)] of every
    round up to ``until_s``; the first cycle's clear at time 0.

    With ``short_rounds``, a second set of ``short_pages`` random pages
    is cleared at every cycle's clear and every ``short_rounds`` rounds,
    read at every round, and a fall it shows at the end of its window
    (:func:`~memmut.agent.wss.short_set.fell`, against the last
    complete cycle, or the running one before there is one or after a
    fall) caps that round's allocation, clears the cycle at once and
    caps the previous one at it
    (:func:`~memmut.agent.wss.short_set.capped`), as the agent does
    (``[badis] ws_curve_short_rounds``). ``events``, a list, receives
    the times of those falls."""
    g = simulated.ReferenceStream(ref_streams.timed(pages, rate),
                                  guest_pages)
    s = simulated.StreamSampler({_VM.uuid: g}, pages=sampled,
                                rng=random.Random(seed))
    short = (simulated.StreamSampler({_VM.uuid: g}, pages=short_pages,
                                     rng=random.Random(seed + 7919))
             if short_rounds else None)
    span_kb = guest_pages * page_kb
    curve_span = span_kb if sampled else None
    half_s = rounds * round_s / 2
    early = []
    a = tau
    while a < round_s * 0.999:
        early.append(a)
        a *= 2
    out = []
    prev = []
    ref_prev = []

    def begin(at):
        g.advance(at)
        s.begin(_VM, None)
        if short is not None:
            short.begin(_VM, None)
        cur = []
        for a in early:
            g.advance(at + a)
            cur.append(ws_curve.read_of(s.peek(_VM, None)))
            if short is not None:
                short_reads.append(ws_curve.read_of(short.peek(_VM, None)))
        return cur

    start = 0.0
    short_reads = []
    cur = begin(start)
    k = 0
    short_restarted = None
    while True:
        k += 1
        t = start + k * round_s
        if t > until_s + 1e-9:
            return out
        if short_restarted is not None:
            # the short set is read between rounds too (the agent's
            # polls), at the same ages after its clear as the curve
            for a in early:
                g.advance(short_restarted + a)
                short_reads.append(ws_curve.read_of(short.peek(_VM, None)))
            short_restarted = None
        g.advance(t)
        cur.append(ws_curve.read_of(s.peek(_VM, None)))
        if running_rule:
            c = ws_curve.choose_cycle(cur, prev, bound_kb, half_s,
                                      span_kb=curve_span,
                                      fall_detect=fall_detect,
                                      fall_min_age_s=2 * round_s)
        else:
            c = ws_curve.choose(ws_curve.merge(cur, prev), bound_kb,
                                span_kb=curve_span)
        fall = None
        if short is not None:
            short_reads.append(ws_curve.read_of(short.peek(_VM, None)))
            # the reference: a complete cycle, not one capped after a fall
            fall = short_set.fell(short_reads, ref_prev or cur, span_kb,
                                  short_rounds * round_s * 0.999,
                                  bound_kb)
        if fall is not None:
            c = dataclasses.replace(c, kb=min(c.kb, fall.kb),
                                    running_only=True, recent_fall=True)
            if events is not None:
                events.append(t)
        out.append((t, c))
        if fall is not None or k >= rounds:
            s.end(_VM, None)
            if fall is not None:
                prev = short_set.capped(prev or cur, fall.kb)
                ref_prev = []
            else:
                prev = ref_prev = ws_curve.monotone(cur)
            start = t
            k = 0
            short_reads = []
            cur = begin(start)
        elif short is not None and k % short_rounds == 0:
            short.begin(_VM, None)
            short_reads = []
            short_restarted = t
