"""VM placement (Neat's ``neat.globals.vm_placement.bin_packing``).

The factory ``best_fit_decreasing_factory(time_step, migration_time,
params)`` returns ``decide(hosts_cpu_usage, hosts_cpu_total,
hosts_ram_usage, hosts_ram_total, inactive_hosts_cpu, inactive_hosts_ram,
vms_cpu, vms_ram, state=None) -> (mapping, state)`` with Neat's
arguments: per active host its CPU use and capacity (MHz) and memory use
and capacity; per inactive (suspended) host its capacities; per VM its CPU
history (MHz, newest last) and memory. ``mapping`` maps every VM to a
host, or is ``{}`` when they cannot all be placed (all or nothing).

Best Fit Decreasing: VMs by decreasing CPU demand (the mean of their last
``last_n_vm_cpu`` values), each onto the active host with the least
available CPU that still fits its CPU and memory (ties: less memory, then
host name); when none fits, the next inactive host (smallest first) is
switched on. Available = ``threshold * capacity - usage`` per resource
(``cpu_threshold`` 0.8, ``ram_threshold`` 0.95). Unlike Neat's code the
thresholds also apply to the hosts it switches on (Neat offered them at
full capacity) and available amounts are not truncated to integers.

Cost: hosts sorted by free capacity (:class:`BestFitIndex`), a bisect
per VM, so ``O((hosts + VMs) log hosts)`` while CPU binds; Neat's scan of
every host per VM stays as :func:`best_fit_decreasing_scan`, the
reference the index is tested against. A placement may also offer the
planner a *session* (``decide.session(...)``, :class:`ThresholdSession`)
that keeps the index for a whole round, so a round with many overloaded
hosts does not rebuild every host's figures per host; the planner uses it
when present and the plain call otherwise (same plans either way).
"""

import bisect

import numpy as np

from memmut.consolidation import algorithm


def _mean_last(history, n):
    if np.isscalar(history):
        return float(history)
    tail = history[-n:]
    if isinstance(tail, np.ndarray):
        tail = tail.tolist()      # Python floats: same sum, faster
    return float(sum(tail)) / len(tail) if len(tail) else 0.0


# How BestFitIndex.place picks among the active hosts a VM fits: the
# least CPU left (best fit, Neat's) or the most (worst fit).
FITS = ('best', 'worst')


def get_available_resources(threshold, usage, total):
    """Map host -> ``threshold * total - usage``."""
    return {h: threshold * total[h] - u for h, u in usage.items()}


def best_fit_decreasing_scan(last_n_vm_cpu, hosts_cpu, hosts_ram,
                             inactive_hosts_cpu, inactive_hosts_ram,
                             vms_cpu, vms_ram):
    """The reference BFD: a scan of every host per VM (O(VMs x hosts)).

    Kept to check :func:`best_fit_decreasing` against (same mapping on
    any input, see the unit tests); not used by the planner.
    """
    vms = sorted(((_mean_last(vms_cpu[vm], last_n_vm_cpu),
                   float(vms_ram[vm]), vm) for vm in vms_cpu),
                 key=lambda t: (-t[0], -t[1], t[2]))
    names = sorted(hosts_cpu)
    cpu = np.array([hosts_cpu[h] for h in names], dtype=float)
    ram = np.array([hosts_ram[h] for h in names], dtype=float)
    order = np.arange(len(names), dtype=float)
    inactive = sorted((inactive_hosts_cpu[h], inactive_hosts_ram[h], h)
                      for h in inactive_hosts_cpu)
    inactive.reverse()                         # pop() takes the smallest
    mapping = {}
    for vm_cpu, vm_ram, vm in vms:
        while True:
            idx = np.flatnonzero((cpu >= vm_cpu) & (ram >= vm_ram))
            if len(idx):
                c = cpu[idx]
                idx = idx[c == c.min()]
                r = ram[idx]
                idx = idx[r == r.min()]
                # Host names sort like their position in ``names`` for
                # hosts known at the start; switched-on ones come after.
                best = int(idx[np.argmin(order[idx])])
                mapping[vm] = names[best]
                cpu[best] -= vm_cpu
                ram[best] -= vm_ram
                break
            if not inactive:
                return {}
            c0, r0, h = inactive.pop()
            names.append(h)
            cpu = np.append(cpu, float(c0))
            ram = np.append(ram, float(r0))
            order = np.append(order, float(len(order)))
    return mapping


def _vm_order(last_n_vm_cpu, vms_cpu, vms_ram, demand=None, demands=None):
    """VMs by decreasing CPU demand, then memory, then id. ``demand``:
    a VM's CPU demand from its history (default: the mean of its last
    ``last_n_vm_cpu`` values); ``demands``: the demands already computed
    (VM -> value), which it then does not compute again."""
    if demands is not None:
        return sorted(((float(demands[vm]), float(vms_ram[vm]), vm)
                       for vm in vms_cpu),
                      key=lambda t: (-t[0], -t[1], t[2]))
    if demand is None:
        def demand(h):
            return _mean_last(h, last_n_vm_cpu)
    return sorted(((demand(vms_cpu[vm]), float(vms_ram[vm]), vm)
                   for vm in vms_cpu),
                  key=lambda t: (-t[0], -t[1], t[2]))


def peaks(histories, n):
    """``_peak_last(h, n)`` of each history, in one numpy reduction when
    they are arrays or lists of one length (a planner placing the VMs of
    a host), one by one otherwise. The maximum is exact either way."""
    # Only the last n values matter: stacking the tails copies a window
    # instead of a day of samples per VM.
    full = _stack([h[-n:] if isinstance(h, np.ndarray) else h
                   for h in histories])
    if full is not None and full.ndim == 2 and full.shape[1]:
        return full[:, -n:].max(axis=1).tolist()
    return [_peak_last(h, n) for h in histories]


def _stack(histories):
    """The histories as one (histories, samples) float array, or None
    when they do not make one. Float arrays of one length are
    concatenated then reshaped: the same array as np.array(histories),
    built without inspecting every element for nesting (several times
    faster with a day of samples per VM)."""
    if histories and all(isinstance(h, np.ndarray) and h.ndim == 1
                         and h.dtype == np.float64 for h in histories):
        n = len(histories[0])
        if all(len(h) == n for h in histories):
            return np.concatenate(histories).reshape(len(histories), n)
        return None
    try:
        return np.array(histories, dtype=float)
    except (ValueError, TypeError):
        return None


def rises(histories, n):
    """How far each history's largest value among its last ``n`` is
    above its last value (0 for an empty one): the room a VM may need
    back if its recent peak repeats."""
    out = []
    for h in histories:
        if not isinstance(h, (np.ndarray, list, tuple)) or not len(h):
            out.append(0.0)
            continue
        out.append(max(0.0, _peak_last(h, n) - float(h[-1])))
    return out


def _peak_last(history, n):
    if not isinstance(history, (np.ndarray, list, tuple)):
        return float(history)
    tail = history[-n:]
    if not len(tail):
        return 0.0
    return float(tail.max() if isinstance(tail, np.ndarray) else max(tail))


def dense_cpu_threshold(cpu_threshold, ram_fraction, dense_ram_fraction,
                        dense_cpu_margin):
    """The CPU threshold of a host whose memory is ``ram_fraction`` full:
    ``cpu_threshold`` up to ``dense_ram_fraction``, then lowered linearly
    to ``cpu_threshold - dense_cpu_margin`` at full memory. A host full
    of memory holds VMs that are slow to move away (migration time grows
    with memory), so it keeps more CPU free for their peaks."""
    if dense_cpu_margin <= 0 or ram_fraction <= dense_ram_fraction:
        return cpu_threshold
    span = max(1e-9, 1.0 - dense_ram_fraction)
    f = min(1.0, (ram_fraction - dense_ram_fraction) / span)
    return cpu_threshold - dense_cpu_margin * f


class BestFitIndex:
    """Hosts' available CPU and memory, ordered for best fit.

    Active hosts sit in one list sorted by ``(available CPU, available
    memory, rank)``, rank being ``(0, name)``, or ``(1, n)`` for the n-th
    host switched on during the current :meth:`place` (Neat's BFD puts
    hosts it switches on after the known ones in its tie-break). The best
    fit for a VM needing ``(c, r)`` is the first entry at or after
    ``bisect((c,))`` whose memory is at least ``r``: the lexicographic
    minimum over the hosts that fit, which is exactly what the reference
    scan (:func:`best_fit_decreasing_scan`) picks. Finding it costs
    ``O(log n)`` plus the entries skipped for lack of memory; updating a
    host costs one removal and one insertion (``bisect`` on a Python list:
    ``O(log n)`` comparisons and one ``memmove``). Suspended hosts wait in
    a list sorted by ``(CPU, memory, name)``, smallest switched on first.

    Used through :meth:`place` (all or nothing: a VM set that does not
    fit leaves the index as it was), :meth:`set_available` and
    :meth:`discard`, so a planner can keep one index for a whole round
    instead of rebuilding the hosts' dictionaries for every overloaded
    host (which made a round quadratic in the hosts).
    """

    def __init__(self, cpu_available, ram_available, inactive_cpu=None,
                 inactive_ram=None):
        self._keys = []                  # sorted (cpu, ram, rank)
        self._key = {}                   # host -> its key in _keys
        for h in cpu_available:
            self._insert(h, float(cpu_available[h]),
                         float(ram_available[h]), (0, h))
        inactive_cpu = inactive_cpu or {}
        inactive_ram = inactive_ram or {}
        # Descending, so pop() takes the smallest.
        self._inactive = sorted(((float(inactive_cpu[h]),
                                  float(inactive_ram[h]), h)
                                 for h in inactive_cpu), reverse=True)

    # -- the sorted list ---------------------------------------------------

    def _insert(self, host, cpu, ram, rank):
        key = (cpu, ram, rank)
        bisect.insort(self._keys, key)
        self._key[host] = key

    def _remove(self, host):
        key = self._key.pop(host)
        i = bisect.bisect_left(self._keys, key)
        del self._keys[i]
        return key

    def __contains__(self, host):
        return host in self._key

    def __len__(self):
        return len(self._key)

    def available(self, host):
        """``(cpu, ram)`` available on an active host of the index."""
        cpu, ram, _ = self._key[host]
        return cpu, ram

    def set_available(self, host, cpu, ram):
        """Set an active host's available CPU and memory (adds it)."""
        if host in self._key:
            self._remove(host)
        self._insert(host, float(cpu), float(ram), (0, host))

    def discard(self, host):
        """Take a host out (it is no longer a target)."""
        if host in self._key:
            self._remove(host)

    def best(self, cpu, ram):
        """The best-fit host's key for ``(cpu, ram)``, or None."""
        i = self._best(cpu, ram)
        return None if i is None else self._keys[i]

    def _best(self, cpu, ram):
        keys = self._keys
        for i in range(bisect.bisect_left(keys, (cpu,)), len(keys)):
            if keys[i][1] >= ram:
                return i
        return None

    def _worst(self, cpu, ram):
        """Index of the host with the most CPU available that fits
        ``(cpu, ram)`` (ties: the last in key order), or None: scanned
        from the end of the list, so it costs the entries skipped for
        lack of memory."""
        keys = self._keys
        for i in range(len(keys) - 1, -1, -1):
            if keys[i][0] < cpu:
                return None
            if keys[i][1] >= ram:
                return i
        return None

    def _take(self, i, cpu, ram):
        """Lower the entry at ``i`` by ``(cpu, ram) >= 0``: it moves
        left, so only the entries in between shift."""
        keys = self._keys
        old = keys[i]
        new = (old[0] - cpu, old[1] - ram, old[2])
        if not new <= old:               # a negative demand: the slow way
            del keys[i]
            bisect.insort(keys, new)
            return old, new
        j = bisect.bisect_left(keys, new, 0, i)
        if j == i:
            keys[i] = new
        else:                   # two memmoves, no slice copied
            del keys[i]
            keys.insert(j, new)
        return old, new

    # -- placing a set of VMs ------------------------------------------------

    def place(self, vms, allow_inactive=True, exclude=(), fit='best'):
        """Best Fit Decreasing of ``vms`` (``(cpu, ram, id)`` in the
        order to place them) -> ``{id: host}``, or ``{}`` (nothing
        changed) when they do not all fit. ``exclude``: hosts that are
        not targets for this call only. ``fit`` ``worst``: each VM goes
        to the active host with the most CPU available that fits it
        instead of the least (a suspended host is still switched on only
        when no active one fits)."""
        if fit not in FITS:
            raise ValueError('fit must be one of %s' % ', '.join(FITS))
        find = self._worst if fit == 'worst' else self._best
        hidden = [(h, self._remove(h)) for h in exclude if h in self._key]
        touched = {}                      # host -> key before the call
        switched = []                     # inactive entries switched on
        mapping = {}
        ok = True
        for vm_cpu, vm_ram, vm in vms:
            while True:
                i = find(vm_cpu, vm_ram)
                if i is not None:
                    old, new = self._take(i, vm_cpu, vm_ram)
                    rank = old[2]
                    host = rank[1] if rank[0] == 0 else switched[rank[1]][2]
                    touched.setdefault(host, old)
                    self._key[host] = new
                    mapping[vm] = host
                    break
                if not allow_inactive or not self._inactive:
                    ok = False
                    break
                entry = self._inactive.pop()
                switched.append(entry)
                self._insert(entry[2], entry[0], entry[1],
                             (1, len(switched) - 1))
                touched.setdefault(entry[2], None)
            if not ok:
                break
        if ok:
            for _, _, h in switched:     # known hosts from now on
                cpu, ram, _ = self._remove(h)
                self._insert(h, cpu, ram, (0, h))
        else:
            for h, key in touched.items():
                self._remove(h)
                if key is not None:
                    self._put(h, key)
            if switched:
                self._inactive = sorted(self._inactive + switched,
                                        reverse=True)
            mapping = {}
        for h, key in hidden:
            self._put(h, key)
        return mapping

    def _put(self, host, key):
        self._keys.insert(bisect.bisect_left(self._keys, key), key)
        self._key[host] = key


def best_fit_decreasing(last_n_vm_cpu, hosts_cpu, hosts_ram,
                        inactive_hosts_cpu, inactive_hosts_ram,
                        vms_cpu, vms_ram):
    """BFD on available capacities; returns VM -> host or ``{}``.

    Same mapping as :func:`best_fit_decreasing_scan` (Neat's scan) in
    ``O((hosts + VMs) log hosts)`` when memory does not bind (see
    :class:`BestFitIndex`).
    """
    index = BestFitIndex(hosts_cpu, hosts_ram, inactive_hosts_cpu,
                         inactive_hosts_ram)
    return index.place(_vm_order(last_n_vm_cpu, vms_cpu, vms_ram))


class ThresholdSession:
    """A planner's view of the hosts for a whole round (see
    :class:`BestFitIndex`): available = ``threshold * capacity - usage``
    per resource, the placement's VM order, and the usage the planner
    sets after each move. ``cpu_threshold_of(ram_fraction)``: the CPU
    threshold of a host whose memory is that full (default: constant);
    ``demand(history)``: a VM's CPU demand (default: the mean of its last
    ``last_n`` values)."""

    def __init__(self, cpu_t, ram_t, last_n, hosts_cpu_usage,
                 hosts_cpu_total, hosts_ram_usage, hosts_ram_total,
                 inactive_hosts_cpu, inactive_hosts_ram,
                 cpu_threshold_of=None, demand=None, peak_window=None):
        self.cpu_t, self.ram_t, self.last_n = cpu_t, ram_t, last_n
        # The demand is the peak of the last peak_window values (None:
        # another demand): the planner may then pass it to place().
        self.peak_window = peak_window
        self.cpu_threshold_of = cpu_threshold_of
        self.demand = demand
        self.cpu_total = dict(hosts_cpu_total)
        self.ram_total = dict(hosts_ram_total)
        self.cpu_total.update(inactive_hosts_cpu)
        self.ram_total.update(inactive_hosts_ram)
        if cpu_threshold_of is None:
            cpu_avail = get_available_resources(cpu_t, hosts_cpu_usage,
                                                hosts_cpu_total)
        else:
            cpu_avail = {h: self._cpu_t(h, hosts_ram_usage[h])
                         * hosts_cpu_total[h] - u
                         for h, u in hosts_cpu_usage.items()}
        self.index = BestFitIndex(
            cpu_avail,
            get_available_resources(ram_t, hosts_ram_usage,
                                    hosts_ram_total),
            {h: cpu_t * c for h, c in inactive_hosts_cpu.items()},
            {h: ram_t * r for h, r in inactive_hosts_ram.items()})

    def _cpu_t(self, host, ram_usage):
        if self.cpu_threshold_of is None:
            return self.cpu_t
        total = self.ram_total[host]
        return self.cpu_threshold_of(ram_usage / total if total else 1.0)

    def place(self, vms_cpu, vms_ram, allow_inactive=True, exclude=(),
              demands=None, fit='best'):
        """VM -> host for all of them, or ``{}`` (nothing changed).
        ``demands``: the VMs' CPU demands when the caller computed them
        already (only for a session whose ``peak_window`` says how: the
        peak of the last that many values). ``fit``: see
        :meth:`BestFitIndex.place`."""
        return self.index.place(_vm_order(self.last_n, vms_cpu, vms_ram,
                                          self.demand, demands),
                                allow_inactive, exclude, fit)

    def set_usage(self, host, cpu_usage, ram_usage):
        """A target host's usage changed (ignored for other hosts)."""
        if host in self.index:
            self.index.set_available(
                host, self._cpu_t(host, ram_usage) * self.cpu_total[host]
                - cpu_usage,
                self.ram_t * self.ram_total[host] - ram_usage)

    def discard(self, host):
        self.index.discard(host)


@algorithm.parameters(cpu_threshold=0.8, ram_threshold=0.95, last_n_vm_cpu=2)
def best_fit_decreasing_factory(time_step, migration_time, params):
    cpu_t = float(params['cpu_threshold'])
    ram_t = float(params['ram_threshold'])
    last_n = int(params['last_n_vm_cpu'])
    if last_n < 1:
        raise ValueError('last_n_vm_cpu must be at least 1')

    def decide(hosts_cpu_usage, hosts_cpu_total, hosts_ram_usage,
               hosts_ram_total, inactive_hosts_cpu, inactive_hosts_ram,
               vms_cpu, vms_ram, state=None):
        mapping = best_fit_decreasing(
            last_n,
            get_available_resources(cpu_t, hosts_cpu_usage,
                                    hosts_cpu_total),
            get_available_resources(ram_t, hosts_ram_usage,
                                    hosts_ram_total),
            {h: cpu_t * c for h, c in inactive_hosts_cpu.items()},
            {h: ram_t * r for h, r in inactive_hosts_ram.items()},
            vms_cpu, vms_ram)
        return mapping, state

    def session(hosts_cpu_usage, hosts_cpu_total, hosts_ram_usage,
                hosts_ram_total, inactive_hosts_cpu, inactive_hosts_ram):
        return ThresholdSession(cpu_t, ram_t, last_n, hosts_cpu_usage,
                                hosts_cpu_total, hosts_ram_usage,
                                hosts_ram_total, inactive_hosts_cpu,
                                inactive_hosts_ram)
    decide.session = session
    return decide


# Neat's defaults (Terracotta's config; neat.conf used cpu 0.95).


@algorithm.parameters(cpu_threshold=0.8, ram_threshold=0.95, window='4h',
                      dense_ram_fraction=0.8, dense_cpu_margin=0.1,
                      memory_window=0, overload_fit='best',
                      overload_window=0, underload_fit='best')
def peak_best_fit_decreasing_factory(time_step, migration_time, params):
    """Best Fit Decreasing on the recent peaks (memmut's, issue 19).

    A VM's CPU demand is the largest of its last ``window`` values, and
    the planner gives each host's CPU use as the largest of the last
    ``window`` values of its VMs' summed history (``decide.usage_window``;
    a VM that moves counts with its own peak): a VM goes where its recent
    peak fits beside the host's, the forecast being that the last hours
    repeat. Hosts whose memory is more than ``dense_ram_fraction`` full
    get a lower CPU threshold, down to ``cpu_threshold -
    dense_cpu_margin`` at full memory (:func:`dense_cpu_threshold`).
    Same index as :func:`best_fit_decreasing` (within one call the
    threshold of a host is the one of its memory at the call's start).

    ``memory_window`` (0: off) does the same for memory: the planner
    packs a VM on its memory plus how far its memory load rose above
    its last value within the last ``memory_window`` samples
    (:func:`rises`), and counts a host's memory as its VMs' plus how
    far their summed load rose within that window
    (``decide.memory_window``). VMs whose working sets peak together
    (a nightly batch) then keep room for the peak on their host, while
    VMs that peak at different times share it.

    ``overload_fit`` (``best``: off) ``worst`` sends the VMs the planner
    takes off an overloaded host to the active host with the most CPU
    left at its recent peak (``decide.overload_fit``; the planner asks
    the session for it, :meth:`BestFitIndex.place`), instead of the
    fullest one they fit: a VM that just overflowed its host with a
    burst lands where the next burst has room, not on a host it will
    overflow in turn. Placing new VMs and emptying underloaded hosts
    keep the best fit, which is what frees hosts.

    ``underload_fit`` (``best``: off) ``worst`` does the same for the
    VMs of a host emptied for underload: the host is switched off either
    way, and its VMs spread the CPU over the active hosts instead of
    filling the fullest (bursty CPU: fewer hosts overflowing later).

    ``overload_window`` (0: off, ``window``) packs the VMs taken off an
    overloaded host on their CPU peak over that many samples instead
    (``decide.overload_window``): a VM that overflowed its host lands
    where its bursts of the last day fit, still by best fit.

    ``window``, ``memory_window`` and ``overload_window`` are counts of
    samples or durations (:func:`memmut.consolidation.algorithm.samples`).
    """
    cpu_t = float(params['cpu_threshold'])
    ram_t = float(params['ram_threshold'])
    window = algorithm.samples(params, 'window', time_step, 1)
    memory_window = algorithm.samples(params, 'memory_window', time_step)
    overload_window = algorithm.samples(params, 'overload_window',
                                        time_step)
    overload_fit = params['overload_fit']
    underload_fit = params['underload_fit']
    for name, fit in (('overload_fit', overload_fit),
                      ('underload_fit', underload_fit)):
        if fit not in FITS:
            raise ValueError('%s must be one of %s'
                             % (name, ', '.join(FITS)))
    dense_f = float(params['dense_ram_fraction'])
    margin = float(params['dense_cpu_margin'])
    if not 0 <= dense_f <= 1 or margin < 0:
        raise ValueError('need 0 <= dense_ram_fraction <= 1 and '
                         'dense_cpu_margin >= 0')

    def threshold_of(ram_fraction):
        return dense_cpu_threshold(cpu_t, ram_fraction, dense_f, margin)

    def demand(history):
        return _peak_last(history, window)

    def session(hosts_cpu_usage, hosts_cpu_total, hosts_ram_usage,
                hosts_ram_total, inactive_hosts_cpu, inactive_hosts_ram):
        return ThresholdSession(cpu_t, ram_t, 1, hosts_cpu_usage,
                                hosts_cpu_total, hosts_ram_usage,
                                hosts_ram_total, inactive_hosts_cpu,
                                inactive_hosts_ram, threshold_of, demand,
                                peak_window=window)

    def decide(hosts_cpu_usage, hosts_cpu_total, hosts_ram_usage,
               hosts_ram_total, inactive_hosts_cpu, inactive_hosts_ram,
               vms_cpu, vms_ram, state=None):
        s = session(hosts_cpu_usage, hosts_cpu_total, hosts_ram_usage,
                    hosts_ram_total, inactive_hosts_cpu, inactive_hosts_ram)
        return s.place(vms_cpu, vms_ram), state
    decide.session = session
    decide.usage_window = window
    decide.memory_window = memory_window
    decide.overload_fit = overload_fit
    decide.underload_fit = underload_fit
    decide.overload_window = overload_window
    return decide
