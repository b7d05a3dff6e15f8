"""bench_kmod_twosets' analysis of a console log (no guest)."""

from tests.benchmarks import bench_kmod_twosets as b

MAP = 128 * 1024


def log(shorts, longs):
    lines = ['MEMMUT-GUEST KMOD-MEMWORK pid=1 uptime=10.0',
             'MEMWORK end step=0 wss_mib=128 t=8.0',
             'MEMWORK end step=1 wss_mib=32 t=16.0']
    for t0, t1, est in shorts:
        lines.append('KMOD-SHORT t0=%.2f t1=%.2f map_kb=%d sampled=400 '
                     'accessed=1 est_kb=%d' % (t0, t1, MAP, est))
    for t0, t1, est in longs:
        lines.append('KMOD-LONG t0=%.2f t1=%.2f map_kb=%d sampled=100 '
                     'accessed=1 est_kb=%d huge=0' % (t0, t1, MAP, est))
    return '\n'.join(lines) + '\n'


def test_a_fall_is_timed_from_the_step_change():
    # steps: 128 MiB in [10, 18), 32 MiB in [18, 26)
    shorts = [(12.0, 14.0, MAP), (18.5, 20.5, 60000),     # not yet
              (20.5, 22.5, 32 * 1024 + 2000), (22.5, 24.5, 32 * 1024)]
    longs = [(11.0, 14.0, MAP), (11.0, 22.5, MAP - 3000),
             (23.0, 25.0, 32 * 1024)]
    falls, short_err, main_err = b.analyse(log(shorts, longs), MAP)
    assert len(falls) == 1
    f = falls[0]
    assert f['from_mib'] == 128 and f['to_mib'] == 32
    assert abs(f['short_s'] - 4.5) < 1e-6         # 22.5 - 18
    assert abs(f['clear_s'] - 5.0) < 1e-6         # the clear at 23
    # the windows inside one step (0.5 s from its ends)
    assert len(short_err) == 4
    assert max(short_err) > 0.2                   # 60000 vs 32 MiB
    # main reads against the largest step since their clear
    assert min(main_err) < 0 and len(main_err) == 3
