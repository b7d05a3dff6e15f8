"""Neat's SLA metrics and the host power model (Beloglazov & Buyya).

Beloglazov & Buyya ("Optimal online deterministic algorithms and adaptive
heuristics for energy and performance efficient dynamic consolidation of
virtual machines in cloud data centers", CCPE 2012, §6.2) judge a
consolidation by two SLA-violation figures and their product:

OTF (their SLATAH, *SLA violation time per active host*)
    ``(1/N) sum_i T_s,i / T_a,i``: for each host that was ever active, the
    fraction of its active time during which its CPU was overloaded (the
    demand of its VMs, plus the cost of the copies it takes part in, at
    or above its capacity: the VMs do not get what they ask for), averaged
    over the hosts. The overload time fraction (OTF) of the TPDS 2013
    paper is the same per-host ratio; the host-time fraction over all
    hosts (``sum T_s / sum T_a``) is reported beside it.
PDM (*performance degradation due to migrations*)
    ``(1/M) sum_j C_d,j / C_r,j``: for each VM, the CPU it loses to live
    migration — 10 % of its CPU use during each of its copies — over the
    CPU it asked for in its lifetime, averaged over the VMs.
SLAV = OTF x PDM, and ESV = energy x SLAV
    one figure for both kinds of violation, and one for energy and
    violations together (lower is better).

Power model (:func:`power`): a host that is on draws ``P(u)`` watts at
CPU utilization ``u`` (capped at 1), a suspended host nothing. Either
Neat's linear model ``P(u) = P_idle + (P_max - P_idle) u`` (the default),
or a SPECpower-like measured curve: the power at 0, 10, ..., 100 % load,
linearly interpolated in between. :data:`SPECPOWER_HP_ML110_G5` is the
curve Beloglazov & Buyya used (SPECpower_ssj2008 results of an HP
ProLiant ML110 G5, 93.7 to 135 W); :func:`power` rescales a curve's
shape to the host's idle and maximum power, so the two models differ only
in shape (the measured curve rises faster at low load).
"""

import numpy as np

# SPECpower_ssj2008, HP ProLiant ML110 G5 (Xeon 3075): watts at 0, 10, ...,
# 100 % load (Beloglazov & Buyya, CCPE 2012, Table 1).
SPECPOWER_HP_ML110_G5 = (93.7, 97.0, 101.0, 105.0, 110.0, 116.0, 121.0,
                         125.0, 129.0, 133.0, 135.0)
# The fraction of a VM's CPU lost while it is copied (CCPE 2012: 10 %).
MIGRATION_DEGRADATION = 0.1
POWER_MODELS = ('linear', 'specpower')


def power(u, idle_watts, max_watts, model='linear',
          curve=SPECPOWER_HP_ML110_G5):
    """Watts drawn at CPU utilization ``u`` (scalar or array, capped to
    [0, 1]) by a host that is on."""
    u = np.clip(np.asarray(u, dtype=float), 0.0, 1.0)
    if model == 'linear':
        shape = u
    elif model == 'specpower':
        c = np.asarray(curve, dtype=float)
        if len(c) < 2 or c[-1] <= c[0]:
            raise ValueError('a power curve needs rising values')
        shape = np.interp(u, np.linspace(0.0, 1.0, len(c)),
                          (c - c[0]) / (c[-1] - c[0]))
    else:
        raise ValueError('unknown power model %r (known: %s)'
                         % (model, ', '.join(POWER_MODELS)))
    return idle_watts + (max_watts - idle_watts) * shape


def otf(active_time, overload_time):
    """``(per-host mean, host-time fraction)`` of CPU-overload time.

    ``active_time`` and ``overload_time``: per host, the time it was on
    and the part of it overloaded (same unit). Hosts never on are left
    out. Both 0.0 when no host was on.
    """
    a = np.asarray(active_time, dtype=float)
    s = np.asarray(overload_time, dtype=float)
    on = a > 0
    if not on.any():
        return 0.0, 0.0
    return float(np.mean(s[on] / a[on])), float(s[on].sum() / a[on].sum())


def pdm(degradation, requested):
    """Mean over the VMs (those that asked for CPU) of the CPU lost to
    migrations over the CPU asked for."""
    d = np.asarray(degradation, dtype=float)
    r = np.asarray(requested, dtype=float)
    ok = r > 0
    if not ok.any():
        return 0.0
    return float(np.mean(d[ok] / r[ok]))


def slav(otf_value, pdm_value):
    return float(otf_value) * float(pdm_value)


def esv(energy, slav_value):
    return float(energy) * float(slav_value)


def metrics(active_time, overload_time, degradation, requested,
            energy_kwh):
    """Neat's figures as a dict (``otf``, ``otf_host_time``, ``pdm``,
    ``slav``, ``esv`` with energy in kWh)."""
    o, o_time = otf(active_time, overload_time)
    p = pdm(degradation, requested)
    v = slav(o, p)
    return {'otf': o, 'otf_host_time': o_time, 'pdm': p, 'slav': v,
            'esv': esv(energy_kwh, v)}
