"""Find consolidation algorithms by name and build them with parameters.

Algorithms are registered as stevedore entry points (as Watcher does), one
namespace per role::

    memmut.consolidation.underload     threshold, last_n_average_threshold
    memmut.consolidation.overload      threshold, last_n_average_threshold,
                                       mad_threshold, iqr_threshold, loess,
                                       loess_robust, otf, mhod, no_migrations
    memmut.consolidation.vm_selection  random, minimum_utilization,
                                       minimum_migration_time,
                                       minimum_migration_time_max_cpu,
                                       minimum_migration_time_per_cpu
    memmut.consolidation.placement     best_fit_decreasing

Each entry point is a Neat factory ``f(time_step, migration_time,
params)`` that declares its parameters and defaults next to itself
(:func:`memmut.consolidation.algorithm.parameters`). A third party adds an
algorithm by declaring an entry point in its own package; adding one to
memmut touches its module and ``setup.cfg`` only.

Parameters come from JSON objects (``[consolidation] *_parameters``); the
keys given override the algorithm's defaults (Neat's), unknown keys are an
error. Windows and periods of memmut's algorithms are counts of history
samples or durations such as ``"1d"`` (:func:`.algorithm.samples`).
"""

import dataclasses
import json

from memmut import plugins

ROLES = ('underload', 'overload', 'vm_selection', 'placement')


class AlgorithmError(ValueError):
    """An unknown algorithm or bad parameters; the message says which."""


def _check_role(role):
    if role not in ROLES:
        raise AlgorithmError('unknown algorithm role %r (known: %s)'
                             % (role, ', '.join(ROLES)))


def available(role):
    """Names of the registered algorithms of a role."""
    _check_role(role)
    return plugins.names(plugins.CONSOLIDATION + role)


def find_factory(role, name):
    """The factory of algorithm ``name`` for ``role``."""
    _check_role(role)
    try:
        return plugins.load(plugins.CONSOLIDATION + role, name)
    except plugins.PluginError as e:
        raise AlgorithmError(str(e))


def parse_parameters(text, what='parameters'):
    """A JSON object (str) or a dict -> dict; clear error otherwise."""
    if isinstance(text, dict):
        return dict(text)
    if text is None or not str(text).strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError as e:
        raise AlgorithmError('%s: not valid JSON (%s): %r' % (what, e, text))
    if not isinstance(value, dict):
        raise AlgorithmError('%s: want a JSON object, got %r' % (what, text))
    return value


def parameters(role, name, given=None):
    """The algorithm's defaults updated with ``given``."""
    defaults = getattr(find_factory(role, name), 'defaults', None)
    given = parse_parameters(given, '%s %s parameters' % (role, name))
    if defaults is None:                 # a third-party algorithm
        return given
    unknown = sorted(set(given) - set(defaults))
    if unknown:
        raise AlgorithmError(
            '%s algorithm %r has no parameter %s (it takes: %s)'
            % (role.replace('_', ' '), name, ', '.join(map(repr, unknown)),
               ', '.join(sorted(defaults)) or 'none'))
    merged = dict(defaults)
    merged.update(given)
    return merged


def build(role, name, time_step, migration_time, params=None):
    """Create the decide function of algorithm ``name``."""
    factory = find_factory(role, name)
    merged = parameters(role, name, params)
    try:
        return factory(time_step, migration_time, merged)
    except (KeyError, TypeError, ValueError) as e:
        raise AlgorithmError('%s algorithm %r: bad parameters %s: %s'
                             % (role.replace('_', ' '), name,
                                json.dumps(merged, sort_keys=True), e))


# The memory overload default: the host's memory above 0.95, or its
# newest load plus its VMs' rise over the hour that followed this time
# yesterday above it. Durations, not samples: a day stays a day whatever
# the [consolidation] interval (algorithm.samples).
SEASONAL_MEMORY_OVERLOAD = {'threshold': 0.95, 'period': '1d',
                            'lead': '1h', 'seasonal': 'rise',
                            'seasonal_threshold': 1.0}


@dataclasses.dataclass(frozen=True)
class AlgorithmSpec:
    """Names and parameters of one consolidation set-up.

    The defaults are the migration-aware set of issue 19 (the
    ``[consolidation]`` option defaults): underload only when the host's
    recent peak is low too (``forecast_threshold``), selection of the VMs
    whose departure keeps the host under its targets longest
    (``longest_relief``), placement on the VMs' and hosts' recent peaks
    with CPU headroom on memory-dense hosts and room for each VM's memory
    peak of the last day (``peak_best_fit_decreasing``, ``memory_window``
    ``"1d"``), memory overload also when the VMs' rise at this time yesterday
    would fill the host (``forecast_threshold``, seasonal ``rise``).
    :meth:`neat` is the set before it:
    Neat's detection and placement with memmut's selection.
    """
    underload: str = 'forecast_threshold'
    underload_parameters: dict = dataclasses.field(default_factory=dict)
    overload: str = 'threshold'
    # 0.85 rather than the algorithm's 0.9 (issue 19, part 6): reacting
    # earlier halves the time hosts spend above their CPU, for a few more
    # overload moves (doc/source/consolidation.rst).
    overload_parameters: dict = dataclasses.field(
        default_factory=lambda: {'threshold': 0.85})
    memory_underload: str = 'forecast_threshold'
    memory_underload_parameters: dict = dataclasses.field(
        default_factory=dict)
    # A host is also overloaded when its VMs rose together within the
    # hour after this time yesterday (issue 19, stop 41): recurring
    # memory spikes of groups of VMs are relieved before they come back.
    memory_overload: str = 'forecast_threshold'
    memory_overload_parameters: dict = dataclasses.field(
        default_factory=lambda: dict(SEASONAL_MEMORY_OVERLOAD))
    vm_selection: str = 'longest_relief'
    vm_selection_parameters: dict = dataclasses.field(default_factory=dict)
    placement: str = 'peak_best_fit_decreasing'
    # Room for each VM's memory peak of the last day, so the VMs moved
    # apart for a recurring spike are not packed together again.
    placement_parameters: dict = dataclasses.field(
        default_factory=lambda: {'memory_window': '1d'})

    @classmethod
    def neat(cls):
        """The set before issue 19 (Neat's algorithms and defaults, with
        memmut's ``minimum_migration_time_per_cpu`` selection)."""
        return cls(underload='last_n_average_threshold',
                   overload_parameters={},
                   memory_underload='last_n_average_threshold',
                   memory_overload='threshold',
                   memory_overload_parameters={'threshold': 0.95},
                   vm_selection='minimum_migration_time_per_cpu',
                   placement='best_fit_decreasing',
                   placement_parameters={})

    # field -> its [consolidation] option; ``<field>_parameters`` comes
    # from ``<option>_parameters``.
    OPTIONS = {'underload': 'underload_detection',
               'overload': 'overload_detection',
               'memory_underload': 'memory_underload_detection',
               'memory_overload': 'memory_overload_detection',
               'vm_selection': 'vm_selection',
               'placement': 'vm_placement'}

    @classmethod
    def from_conf(cls, conf):
        c = conf.consolidation
        fields = {}
        for field, option in cls.OPTIONS.items():
            fields[field] = getattr(c, option)
            fields[field + '_parameters'] = parse_parameters(
                getattr(c, option + '_parameters'),
                '[consolidation] %s_parameters' % option)
        return cls(**fields)

    def effective(self):
        """Names with their full (default-completed) parameters."""
        return {
            'underload': (self.underload, parameters(
                'underload', self.underload, self.underload_parameters)),
            'overload': (self.overload, parameters(
                'overload', self.overload, self.overload_parameters)),
            'memory_underload': (self.memory_underload, parameters(
                'underload', self.memory_underload,
                self.memory_underload_parameters)),
            'memory_overload': (self.memory_overload, parameters(
                'overload', self.memory_overload,
                self.memory_overload_parameters)),
            'vm_selection': (self.vm_selection, parameters(
                'vm_selection', self.vm_selection,
                self.vm_selection_parameters)),
            'placement': (self.placement, parameters(
                'placement', self.placement, self.placement_parameters)),
        }


@dataclasses.dataclass(frozen=True)
class Algorithms:
    """The decide functions one round uses (see :mod:`.planner`)."""
    cpu_underload: object
    cpu_overload: object
    memory_underload: object
    memory_overload: object
    vm_selection: object
    placement: object


def build_all(spec, time_step, migration_time):
    """Decide functions for ``spec``; ``migration_time`` in seconds."""
    return Algorithms(
        cpu_underload=build('underload', spec.underload, time_step,
                            migration_time, spec.underload_parameters),
        cpu_overload=build('overload', spec.overload, time_step,
                           migration_time, spec.overload_parameters),
        memory_underload=build('underload', spec.memory_underload,
                               time_step, migration_time,
                               spec.memory_underload_parameters),
        memory_overload=build('overload', spec.memory_overload, time_step,
                              migration_time,
                              spec.memory_overload_parameters),
        vm_selection=build('vm_selection', spec.vm_selection, time_step,
                           migration_time, spec.vm_selection_parameters),
        placement=build('placement', spec.placement, time_step,
                        migration_time, spec.placement_parameters))


def migration_time(vms_ram_mb, bandwidth_mb_s):
    """Neat's estimate: mean VM memory (MB) over the bandwidth (MB/s)."""
    vals = list(vms_ram_mb)
    if not vals or bandwidth_mb_s <= 0:
        return 0.0
    return float(sum(vals)) / len(vals) / bandwidth_mb_s
