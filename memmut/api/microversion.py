"""Microversions: ``OpenStack-API-Version: memmut X.Y``.

A request without the header gets the minimum version; ``latest`` gets the
maximum; a version outside ``[MIN_VERSION, MAX_VERSION]`` is refused with
406 and a malformed one with 400. Every response says which version served
it (same header) and ``Vary: OpenStack-API-Version``.

History (keep :data:`VERSIONS` and ``doc/source/api-ref.rst`` in step):
"""

import microversion_parse

from memmut.api import errors

SERVICE_TYPE = 'memmut'
HEADER = 'OpenStack-API-Version'
ENVIRON_KEY = 'memmut.microversion'

VERSIONS = [
    ('1.0', 'Initial version: hosts, VMs and their history, consolidation '
            'rounds and remote-memory allocations.'),
    ('1.1', 'VMs and their history carry the agent-reported WSS^max_avg '
            '(``wss_max_avg_kb``, with its inputs ``max_avg_window`` and '
            '``max_avg_slice_s``) and the Badis mode (``badis_mode``: V, VG '
            'or G), null where the agent did not report them.'),
    ('1.2', 'VMs and their history carry what Badis learned: the '
            'pinned-page correction (``pinned_kb``), why it last changed '
            '(``pinned_note``) and when (``pinned_at``), null where the '
            'agent did not report them (other estimators, older agents).'),
    ('1.3', 'A VM\'s history goes on beyond the raw sample retention with '
            'its rolled-up intervals (``[controller] '
            'raw_sample_retention``, ``rollup_retention``): every entry '
            'has ``kind``, ``sample`` for a raw sample or ``rollup`` for '
            'one interval (``interval_start``, ``interval_end``, '
            '``samples``, ``host``, ``booked_kb``, ``wss_max_kb``, '
            '``wss_max_avg_kb``, ``cpu_used_s``, ``cpu_spent_s``, '
            '``cpu_mean_cores``, ``cpu_peak_cores``; dated by its newest '
            'sample).'),
    ('1.4', 'VMs and their history carry Badis\'s shrink floor: what the '
            'demand may not fall below since a shrink was followed by '
            'swap-ins (``shrink_floor_kb``, 0 for none), why it last '
            'changed (``shrink_floor_note``) and when '
            '(``shrink_floor_at``), null where the agent did not report '
            'them (other estimators, older agents).'),
    ('1.5', 'VMs and their history carry ``packing_kb``, the memory the '
            'consolidation planner packs the VM on before headroom: its '
            'booking with ``[consolidation] memory_basis = booked``, else '
            'the larger of WSS^max_avg and the shrink floor '
            '(``pack_on_shrink_floor``), capped at the booking; null '
            'without a WSS^max_avg. Rolled-up intervals carry their newest '
            'sample\'s ``shrink_floor_kb`` and their ``packing_kb``.'),
]
__doc__ += '\n'.join('* %s - %s' % v for v in VERSIONS)


class Version(tuple):
    def __new__(cls, major, minor):
        return super().__new__(cls, (major, minor))

    @classmethod
    def parse(cls, text):
        try:
            major, minor = text.strip().split('.')
            if not (major.isdigit() and minor.isdigit()):
                raise ValueError(text)
            return cls(int(major), int(minor))
        except ValueError:
            raise errors.BadRequest(
                'invalid microversion %r in the %s header: it must be '
                'X.Y or "latest"' % (text, HEADER),
                code='memmut.microversion_invalid')

    def __str__(self):
        return '%d.%d' % self

    def matches(self, minimum):
        return self >= Version.parse(minimum)


MIN_VERSION = Version.parse(VERSIONS[0][0])
MAX_VERSION = Version.parse(VERSIONS[-1][0])


def from_headers(headers):
    text = microversion_parse.get_version(dict(headers.items()),
                                          service_type=SERVICE_TYPE)
    if text is None:
        return MIN_VERSION
    if text.strip() == 'latest':
        return MAX_VERSION
    version = Version.parse(text)
    if not MIN_VERSION <= version <= MAX_VERSION:
        raise errors.NotAcceptable(
            'microversion %s is not supported: this memmut-api serves %s '
            'to %s' % (version, MIN_VERSION, MAX_VERSION))
    return version


def header_value(version):
    return '%s %s' % (SERVICE_TYPE, version)
