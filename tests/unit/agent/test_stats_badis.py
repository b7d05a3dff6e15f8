"""The balloon-statistics Badis of the mutualization functional test and
benchmark (tests/harness/mutualization.py): its bounded swap probe."""

from memmut.agent.wss import badis
from memmut.virt import driver as virt_driver
from tests.harness import mutualization as mut_support

MiB = 1024


def info(balloon_mib, swap_in_mib, used_mib=100):
    return virt_driver.VMInfo(
        uuid='vm', name='vm', state='running', booked_kb=384 * MiB,
        balloon_kb=balloon_mib * MiB,
        memory_stats={'available': (balloon_mib - 48) * MiB,
                      'unused': (balloon_mib - 48 - used_mib) * MiB,
                      'swap_in': swap_in_mib * MiB,
                      'swap_out': swap_in_mib * MiB},
        cpu_time_ns=1)


def ghost_of(est, vm, t):
    """What the probe asked for this round (the estimate Badis got)."""
    out = est.observe([vm], t)['vm']
    return out.wss_kb // MiB, out.demand_kb // MiB


def test_probe_escalates_when_granted_and_holds_when_not():
    est = mut_support.StatsBadis(badis.BadisParams(average_window=1,
                                                   time_slice=1.0))
    ghost_of(est, info(200, 0), 0)
    # thrashing: 400 MiB read back in a round, yet the first request is
    # only 32 MiB more
    assert ghost_of(est, info(200, 400), 2) == (232, 232)
    # not granted (pool empty): the request is held, not doubled
    assert ghost_of(est, info(200, 800), 4) == (232, 232)
    assert ghost_of(est, info(210, 1200), 6) == (232, 232)
    # granted and still swapping: twice the step
    assert ghost_of(est, info(232, 1600), 8) == (296, 296)
    # never more than was read back
    assert ghost_of(est, info(296, 1610), 10) == (296 + 16, 296 + 16)
    # quiet: the probe starts again from the first step
    ghost_of(est, info(312, 1610, used_mib=150), 12)
    assert ghost_of(est, info(312, 2000), 14)[0] == 312 + 32


def test_unbounded_stand_in_on_request():
    est = mut_support.StatsBadis(badis.BadisParams(average_window=1,
                                                   time_slice=1.0),
                                 probe_kb=None)
    ghost_of(est, info(200, 0), 0)
    assert ghost_of(est, info(200, 100), 2)[0] == 300
