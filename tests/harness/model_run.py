"""The Badis benchmark's agent loop against the paged guest model
(:mod:`memmut.evaluation.guest_model`) in virtual time: the agent's own
estimation pipeline, Badis and balloon actuator, as
:mod:`tests.harness.badis_run` drives them on a TCG guest, with the
model standing in for libvirt, the smaps sampler and memstore's reuse
distances. One 120 s case runs in seconds; a seed fixes the guest, so two
configurations meet the same accesses.
"""

import collections
import dataclasses
import statistics

import numpy as np

from memmut.agent.mutualization import on_demand
from memmut.agent.wss import estimate
from memmut.agent.wss import pipeline
from memmut.agent.wss import sampling
from memmut.agent.wss import swap_monitors as swapmod
from memmut.agent.wss.sampling import base as sampling_base
from memmut.evaluation import guest_model
from memmut.evaluation import workloads
from memmut.evaluation import wss_accuracy
from memmut.memstore import reuse
from memmut.virt import driver as virt_driver
from tests import common
from tests.harness import badis_run

UUID = '6d6f6465-6c00-4000-8000-000000000001'
POLL_S = badis_run.POLL_S
# The agent's clock. 'bench': the TCG bench's (0.5 s polls, 1 s rounds, a
# 4 s slice; production's rounds compressed 60 times, while a swap-in
# takes as long as ever, so a rise takes several rounds to read back).
# 'production': the agent's defaults (5 s polls; [badis] round_interval,
# average_window, time_slice, shrink_swapin_window as shipped: 60 s
# rounds, 1 h slice). Sizes (headroom, floor, probe steps) stay the
# bench's, scaled to the guest.
TIMINGS = ('bench', 'production')
PRODUCTION_POLL_S = 5.0
_BENCH_TIME_OPTIONS = ('round_interval', 'average_window', 'time_slice',
                       'shrink_swapin_window')
# the suite's data (tests/benchmarks/bench_patterns.py DATA_MIB)
DATA_MIB = 160
ESTIMATORS = ('none', 'badis', badis_run.ORACLE)


class Clock:
    """Virtual time, seconds since the guest booted."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


class ModelDriver(virt_driver.Driver):
    """One model guest behind the hypervisor driver interface."""
    name = 'model'

    def __init__(self, guest, clock):
        self.guest = guest
        self.clock = clock

    def connect(self):
        pass

    def host_info(self):
        b = self.guest.layout.booked_kb
        return virt_driver.HostInfo(memory_total_kb=4 * b,
                                    memory_free_kb=3 * b, cpu_count=2,
                                    cpu_util=0.0)

    def list_vms(self):
        g = self.guest
        return [virt_driver.VMInfo(
            uuid=UUID, name='model', state='running',
            booked_kb=g.layout.booked_kb, balloon_kb=g.balloon_kb,
            memory_stats=g.memory_stats(),
            cpu_time_ns=int(g.wall * 1e9), domain_type='model')]

    def set_stats_period(self, uuid, seconds):
        pass

    def _floor_inputs(self, uuid):
        lay = self.guest.layout
        return lay.booked_kb, lay.reserved_kb, None

    def _set_balloon(self, uuid, kib):
        self.guest.set_balloon(kib)


class ModelSampler(sampling_base.Sampler):
    """The smaps back-end's reading of the model: every guest frame
    touched since the last clear."""
    name = 'model'
    auto_rank = 0
    can_peek = True

    def __init__(self, guest, clock):
        self.guest = guest
        self.clock = clock
        self._started = None

    def capability(self, vm, pid):
        return sampling_base.Capability(self.name, True, 'model guest',
                                        exact=True)

    def begin(self, vm, pid):
        self.guest.clear_refs()
        self._started = self.clock()

    def end(self, vm, pid):
        sample = self.peek(vm, pid)
        self._started = None
        return sample

    def peek(self, vm, pid):
        if self._started is None:
            return None
        ref = self.guest.referenced_kb()
        span = self.guest.layout.booked_kb
        return sampling_base.AccessSample(
            backend=self.name, accessed=ref // guest_model.PAGE_KB,
            sampled=span // guest_model.PAGE_KB, span_kb=span,
            interval_s=self.clock() - self._started, referenced_kb=ref)

    def forget(self, uuid):
        self._started = None


class ModelPageSampler(ModelSampler):
    """The page-sampling back-ends' reading of the model (page_idle, kmod:
    what the agent uses on KVM): ``pages`` random 4 KiB frames of the
    guest RAM, drawn anew at every :meth:`begin` and re-read by
    :meth:`peek`, and a second, short-cycle set (:mod:`.short_set`).

    The model keeps which data pages were touched, not which frames, so a
    frame is drawn as a uniform number u: the frames touched since the
    clear are a random part of the guest RAM with respect to a draw made
    independently of the guest's accesses, so "frame i touched by time t"
    is u_i < K(t) / N (K(t) frames touched of N). Each read then has the
    binomial count the real back-ends read, and re-reads of one draw are
    nested (a frame seen touched stays touched until the next clear), as
    re-reads of the same frames are. The two sets are drawn independently
    (on a host they are disjoint; at 100 + 400 of 65 536 frames that
    changes nothing measurable)."""
    name = 'model-pages'
    can_short = True

    def __init__(self, guest, clock, pages, rng):
        super().__init__(guest, clock)
        self.pages = pages
        self.rng = rng
        self._draw = None
        self._short = None

    def capability(self, vm, pid):
        return sampling_base.Capability(
            self.name, True, 'model guest, %d random pages' % self.pages)

    def begin(self, vm, pid):
        super().begin(vm, pid)
        self._draw = self.rng.random(self.pages)
        self._short = None

    def peek(self, vm, pid):
        if self._started is None:
            return None
        return self._read(self._draw, self.guest.referenced_kb(),
                          self._started)

    def begin_short(self, vm, pid, pages):
        if self._started is None:
            raise sampling_base.SamplerError('no running interval')
        self.guest.clear_short_refs()
        self._short = (self.rng.random(pages), self.clock())

    def peek_short(self, vm, pid):
        if self._short is None:
            return None
        draw, started = self._short
        return self._read(draw, self.guest.short_referenced_kb(), started)

    def _read(self, draw, touched_kb, started):
        span = self.guest.layout.booked_kb
        accessed = int(np.count_nonzero(draw < touched_kb / span))
        return sampling_base.AccessSample(
            backend=self.name, accessed=accessed, sampled=len(draw),
            span_kb=span, interval_s=self.clock() - started)

    def forget(self, uuid):
        super().forget(uuid)
        self._draw = self._short = None


# the model's own options in a case's options (the rest are [badis]'s):
# sampler=smaps (every page, the TCG test bed's back-end; the default) or
# sampler=pages ([badis] sample_pages random pages, KVM's page_idle and
# kmod)
SAMPLERS = ('smaps', 'pages')


def split_options(options):
    """A case's options -> (sampler, the [badis] ``KEY=VALUE`` rest)."""
    sampler, rest = 'smaps', []
    for pair in options:
        key, _, value = pair.partition('=')
        if key.strip() == 'sampler':
            if value not in SAMPLERS:
                raise ValueError('sampler=%s: want one of %s'
                                 % (value, ', '.join(SAMPLERS)))
            sampler = value
        else:
            rest.append(pair)
    return sampler, tuple(rest)


def memstore_reader(guest, clock, percentile):
    """memstore's monitor reading of the model's swap (one interval per
    read, as the real export's)."""
    last = [clock()]

    def read(vm):
        hist, swap_ins = guest.take_reuse()
        now = clock()
        seconds, last[0] = now - last[0], now
        extra = reuse.extra_pages(hist, percentile, guest.bucket_pages)
        return reuse.ReuseReading(
            swap_out_pages=guest.swap_out_pages,
            swap_in_pages=guest.swap_in_pages, interval_seconds=seconds,
            interval_swap_ins=swap_ins, interval_cold=0, histogram=hist,
            bucket_pages=guest.bucket_pages, percentile=percentile,
            extra_bytes=extra * 4096, queue_pages=guest.queue_pages())
    return read


@dataclasses.dataclass
class Case:
    pattern: str                # a name of workloads.pattern_suite or
    #                             held_out_suite, or W1-W5
    start: str = 'boot'         # or 'loaded'
    estimator: str = 'badis'
    seed: int = 0
    seconds: float = 120.0
    costs: str = 'tcg'
    options: tuple = ()         # ('KEY=VALUE', ...) of [badis]
    label: str = ''
    alloc: str = 's'            # W1-W5: 's' static or 'd' dynamic
    booked_mib: int = 256       # the guest's memory
    data_mib: int = DATA_MIB    # the suite's data (W1-W5: their peak)
    reclaim: str = 'lru'        # the guest's reclaim rule (guest_model)
    # pages a shrink's reclaim writes and leaves in the swap cache, per
    # page it frees (guest_model.PagedGuest; 0: no swap cache)
    writeback_surplus: float = 0.0
    timing: str = 'bench'       # or 'production' (TIMINGS)
    # how a balloon shrink is met (guest_model.BALLOON_RULES)
    balloon: str = 'instant'


def poll_seconds(case):
    """Seconds between two of the agent's polls in ``case``; raises
    ValueError on a timing not in TIMINGS."""
    _check_timing(case.timing)
    return PRODUCTION_POLL_S if case.timing == 'production' else POLL_S


def _check_timing(timing):
    if timing not in TIMINGS:
        raise ValueError('unknown timing %r (known: %s)'
                         % (timing, ', '.join(TIMINGS)))


# W1-W5 as the TCG bench runs them (bench_badis.py: peak 160 MiB, 10 s
# steps, swept in address order)
W_STEP_S = 10.0


# Patterns of the model only: name -> (kind, touches per second, share of
# the data). ``kv`` is the suite's random pass as slow as redis-benchmark's
# GETs of 4 KiB values on the TCG guests (about 1600 GETs/s, two pages
# each) over as much data (20 000 keys of 5 KiB slabs, 100 MiB: 9/16 of
# the suite's 160; tests/benchmarks/results/badis51/redis120), so that one
# round sees a tenth of it and a pass takes 7 s; its first pass is the
# load.
#
# ``db16`` and ``db16_fast`` are the sqlite3 programs of the TCG bed
# (tests/harness/sqlite.py, results/badis89_sqlite): a table of 105 MiB
# (21/32 of the suite's 160) loaded in address order, then point lookups
# whose key is ``1 + floor(rows * u ** 16)``, a power law of exponent
# 15/16 over the rows' rank, two pages a lookup: ``db16`` at the paced
# program's 1 560 lookups a second, ``db16_fast`` at the 40 000 of the
# flat-out one.
ModelPattern = collections.namedtuple(
    'ModelPattern', 'kind rate share exponent load', defaults=(None, False))
MODEL_PATTERNS = {
    'kv': ModelPattern('random', 3200, 9 / 16),
    'db16': ModelPattern('zipf', 3120, 21 / 32, 15 / 16, True),
    'db16_fast': ModelPattern('zipf', 80000, 21 / 32, 15 / 16, True),
}


def pattern_names():
    """The patterns a case may name (W1-W5 aside)."""
    return workloads.suite_names() + tuple(MODEL_PATTERNS)


def schedule(case):
    """(pattern, steps) of a case."""
    if case.pattern in workloads.SHAPES:
        return workloads.Pattern('seq'), workloads.shape_schedule(
            case.pattern, case.data_mib, W_STEP_S)
    if case.pattern in MODEL_PATTERNS:
        m = MODEL_PATTERNS[case.pattern]
        return workloads.Pattern(m.kind, exponent=m.exponent), [
            workloads.Step(max(1, int(case.data_mib * m.share)),
                           case.seconds)]
    return workloads.named_pattern(case.pattern, case.data_mib,
                                   case.seconds)


def touch_rate(case):
    """The case's touch rate (None: its pattern's on the TCG guests)."""
    m = MODEL_PATTERNS.get(case.pattern)
    return m.rate if m else None


def duration(case):
    if case.pattern in workloads.SHAPES:
        return workloads.duration(schedule(case)[1])
    return case.seconds


def agent_conf(options=(), timing='bench'):
    """The TCG bench's agent configuration with ``options`` on top; with
    ``timing`` 'production', the agent's own defaults of time."""
    _check_timing(timing)
    opts = {g: dict(v) for g, v in badis_run.AGENT_OPTIONS.items()}
    if timing == 'production':
        for key in _BENCH_TIME_OPTIONS:
            opts['badis'].pop(key, None)
        opts['agent'] = dict(opts['agent'], poll_interval=PRODUCTION_POLL_S)
    for pair in options:
        key, _, value = pair.partition('=')
        opts['badis'][key.strip()] = badis_run.option_value(value)
    opts['agent'] = dict(opts['agent'], sampling_backend='auto')
    return common.private_conf(**opts)


def run_case(case, keep_rows=False):
    """One case: the guest from boot for ``case.seconds``, the agent from
    boot or from the end of its first pass (+ the TCG bench's delay)."""
    pattern, steps = schedule(case)
    seconds = duration(case)
    rng = np.random.default_rng(case.seed)
    model = MODEL_PATTERNS.get(case.pattern)
    refs = guest_model.References(pattern, steps, rng, alloc=case.alloc,
                                  load=bool(model and model.load))
    g = guest_model.PagedGuest(
        refs, layout=guest_model.Layout(
            booked_kb=case.booked_mib * guest_model.MIB),
        costs=guest_model.COSTS[case.costs], rate=touch_rate(case),
        reclaim=case.reclaim, writeback_surplus=case.writeback_surplus,
        balloon=case.balloon)
    clock = Clock()
    booked = g.layout.booked_kb
    poll_s = poll_seconds(case)
    t = 0.0
    if case.start == 'loaded':
        while refs.loaded_at is None and t < seconds:
            t += poll_s
            g.run_until(t)
        t += LOADED_DELAY_S
        g.run_until(t)
    rows = []
    if case.estimator != 'none':
        sampler, options = split_options(case.options)
        conf = agent_conf(options, case.timing)
        drv = ModelDriver(g, clock)
        drv.configure_floor(conf)
        if sampler == 'pages':
            # its own stream: the guest's accesses stay the seed's
            model = ModelPageSampler(g, clock, conf.badis.sample_pages,
                                     np.random.default_rng(
                                         (case.seed, 1_000_003)))
        else:
            model = ModelSampler(g, clock)
        samplers = sampling.SamplerChoice(
            conf, drv, samplers={model.name: model})
        swap = swapmod.SwapMonitors(pipeline.default_swap_monitors(
            conf, memstore_reader(g, clock, conf.memstore.ghost_percentile),
            clock=clock))
        pipe = pipeline.EstimationPipeline(
            conf, drv, samplers=samplers, swap=swap,
            estimator='none' if case.estimator == badis_run.ORACLE
            else case.estimator)
        actuator = on_demand.OnDemandController(conf, drv)
        while t < seconds - 1e-9:
            g.run_until(t)
            clock.now = t
            vms = drv.list_vms()
            est = pipe.estimate(vms, t)
            truth = refs.true_wss_kb(t, g.layout.base_kb)
            if case.estimator == badis_run.ORACLE:
                kb = truth if truth is not None else booked
                est = {UUID: estimate.Estimate(
                    uuid=UUID, wss_kb=kb, max_avg_kb=kb, demand_kb=kb,
                    source=badis_run.ORACLE, timestamp=t)}
            actuator.step(vms, est)
            row = {'t': t, 'balloon_kb': vms[0].balloon_kb,
                   'truth_kb': truth,
                   'swap_in': vms[0].memory_stats['swap_in']}
            e = est.get(UUID)
            if e is not None:
                row.update(badis=e.wss_kb, demand_kb=e.demand_kb,
                           mode=e.mode, max_avg_kb=e.max_avg_kb,
                           floor_kb=e.shrink_floor_kb)
                events = list(getattr(e, 'events', ()) or ())
                if e.transition:
                    events.insert(0, e.transition)
                if events and e.fresh:
                    row['events'] = events
            rows.append(row)
            t += poll_s
    g.run_until(seconds)
    out = {'pattern': case.pattern, 'start': case.start,
           'alloc': case.alloc,
           'estimator': case.estimator, 'label': case.label,
           'seed': case.seed, 'costs': case.costs,
           'reclaim': case.reclaim,
           'writeback_surplus': case.writeback_surplus,
           'timing': case.timing, 'balloon': case.balloon,
           'options': list(case.options), 'ops': g.ops,
           'swap_in_mib': g.swap_in_pages * guest_model.PAGE_KB / 1024,
           'saved_pct': saved_pct(rows, booked)}
    if case.estimator == 'badis' and pattern.well_defined and rows:
        err = wss_accuracy.errors(rows, 'badis', booked)
        out.update(error_pct=err['all'], S_more=err['S_more'],
                   S_less=err['S_less'])
        # the goal's figures, one poll of allowance (a run without a
        # poll of a kind was never off that way: 0)
        allow = err.get('allowance') or {}
        out.update(allow_S_more=allow.get('S_more') or 0.0,
                   allow_S_less=allow.get('S_less') or 0.0)
        late = wss_accuracy.settled(rows, 'badis', booked)
        out.update(settled_S_more=late['S_more'],
                   settled_S_less=late['S_less'])
        # the figure the controller packs on, without and with the floor
        for name, carry in (('max_avg', False), ('floor', True)):
            p = wss_accuracy.packing(rows, booked, carry) or {}
            out.update({'pack_%s_%s' % (name, k): v for k, v in p.items()})
    if keep_rows:
        out['rows'] = rows
    return out


# the TCG bench waits this long after the first pass before a loaded
# start (bench_patterns.LOADED_DELAY_S)
LOADED_DELAY_S = 3.0


def saved_pct(rows, booked_kb):
    vals = [booked_kb - r['balloon_kb'] for r in rows]
    return 100.0 * statistics.mean(vals) / booked_kb if vals else 0.0
