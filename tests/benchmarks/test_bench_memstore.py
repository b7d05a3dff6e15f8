"""The memstore benchmark's pure parts: which pairs are compared and
judged, the per-case analysis, the guest part's records, and faultlat's
output (the C program, run on the host over a region that never swaps)."""

import shutil
import subprocess

import pytest

from tests.benchmarks import bench_memstore as bm
from tests.benchmarks import discipline
from tests.harness import faultlat

NAMES = ['memstore', 'nbdkit-sparse', 'nbdkit-malloc', 'nbdkit-malloc-t1',
         'qemu-nbd-file', 'memstore-slab-tls', 'nbdkit-malloc-tls',
         'nbdkit-malloc-tcp']


def test_pairs_put_each_baseline_beside_the_memstore_of_its_transport():
    assert bm.pairs_of(NAMES) == [
        ('memstore', 'nbdkit-sparse'), ('memstore', 'nbdkit-malloc'),
        ('memstore', 'nbdkit-malloc-t1'), ('memstore', 'qemu-nbd-file'),
        ('memstore-slab-tls', 'nbdkit-malloc-tls'),
        ('memstore-slab-tls', 'nbdkit-malloc-tcp')]
    # without the slab the TCP baselines are compared with nothing
    assert bm.pairs_of(['memstore', 'nbdkit-malloc-tls']) == []


def test_goal_judged_against_nbdkit_on_the_same_transport_only():
    assert bm.judged('memstore', 'nbdkit-malloc-t1')
    assert not bm.judged('memstore', 'qemu-nbd-file')
    assert bm.judged('memstore-slab-tls', 'nbdkit-malloc-tls')
    # plain TCP is the cost of TLS, not a like-for-like baseline
    assert not bm.judged('memstore-slab-tls', 'nbdkit-malloc-tcp')


def test_nbdkit_names_and_commands():
    n = bm.Nbdkit(1 << 20, 'malloc', 4, 'tls')
    assert n.name == 'nbdkit-malloc-t4-tls' and n.tls
    cmd = n.command('/d')
    assert '--tls=require' in cmd and '--tls-psk=/d/psk' in cmd
    assert cmd[-1] == 'allocator=malloc' and '--unix' not in cmd
    u = bm.Nbdkit(1 << 20, 'sparse', bm.NBDKIT_DEFAULT_THREADS)
    assert u.name == 'nbdkit-sparse' and '--unix' in u.command('/d')


def _runs(ms_iops, base_iops):
    runs = []
    for rep, (a, b) in enumerate(zip(ms_iops, base_iops)):
        for srv, v in (('memstore', a), ('nbdkit-malloc', b)):
            for rw, qd in bm.WORKLOADS:
                runs.append({'server': srv, 'workload': bm.case_name(rw, qd),
                             'repeat': rep, 'iops': v, 'p50_us': 10.0,
                             'p99_us': 100.0 * 1000 / v})
    return runs


def test_analyse_pairs_by_repeat_and_judges_on_the_interval():
    cases = bm.analyse(_runs([2000, 2100, 1900], [1000, 1000, 1000]),
                       ['memstore', 'nbdkit-malloc'])
    c = cases[0]
    r = c['ratios_memstore_to']['nbdkit-malloc']
    assert r['iops']['n'] == 3 and 1.8 < r['iops']['mean'] < 2.2
    assert c['goal']['nbdkit-malloc'] == {'iops_ge_1': 'met',
                                          'p99_le_2': 'met'}
    assert c['goal_verdict'] == 'met' and c['tcp_verdict'] is None
    slow = bm.analyse(_runs([500, 600, 400], [1000, 1000, 1000]),
                      ['memstore', 'nbdkit-malloc'])
    assert slow[0]['goal']['nbdkit-malloc']['iops_ge_1'] == 'not met'


def _guest_run(server, rep, p99_ns, faults):
    fields = faultlat.parse_result(
        'FAULTLAT start mib=384 seconds=20 cluster=0 memtotal_kb=200000 '
        'swaptotal_kb=524284\n'
        'FAULTLAT fill ms=9000 majflt=0 pswpout=50000\n'
        'FAULTLAT result touches=100000 majflt=%d seconds=20.000 '
        'touch_p50_ns=900 touch_p90_ns=400000 touch_p99_ns=%d '
        'fault_p50_ns=300000 fault_p90_ns=500000 fault_p99_ns=%d '
        'fault_p999_ns=%d max_ns=9000000 mean_ns=150000 errors=0 '
        'pswpin=%d pswpout=%d\nFAULTLAT done\n' % (
            faults, p99_ns, p99_ns, 2 * p99_ns, faults, faults))
    r = bm.guest_record(fields)
    r.update(server=server, repeat=rep)
    return r


def test_guest_record_and_analysis():
    r = _guest_run('memstore', 0, 800000, 40000)
    assert r['fault_p99_us'] == 800.0 and r['faults_per_s'] == 2000.0
    assert r['fault_share'] == 0.4 and r['fill_pswpout'] == 50000
    runs = [_guest_run('memstore', i, 800000, 40000 + 100 * i)
            for i in range(3)] + [
        _guest_run('nbdkit-sparse', i, 1000000, 30000 + 50 * i)
        for i in range(3)]
    summaries, ratios, verdicts = bm.analyse_guest(
        runs, ['memstore', 'nbdkit-sparse'])
    assert summaries['memstore']['fault_p99_us']['mean'] == 800.0
    assert ratios['nbdkit-sparse']['fault_p99_us']['mean'] == \
        pytest.approx(0.8)
    assert verdicts['nbdkit-sparse'] == {'fault_p99_le_2': 'met',
                                         'faults_per_s_ge_1': 'met'}


def test_faultlat_cmdline_and_missing_result():
    words = faultlat.cmdline(384, 20, cluster=0).split()
    assert 'memmut.run=/opt/faultlat/faultlat' in words
    assert 'faultlat.mib=384' in words and 'memwork.poweroff=1' in words
    with pytest.raises(ValueError):
        faultlat.parse_result('FAULTLAT start mib=1\n')


@pytest.mark.skipif(not shutil.which('gcc'), reason='needs gcc')
def test_faultlat_program_on_the_host(tmp_path):
    try:
        binary = faultlat.build(str(tmp_path))
    except Exception as e:      # no static glibc here
        pytest.skip(str(e))
    out = subprocess.run([binary, 'faultlat.mib=8', 'faultlat.seconds=0.2',
                          'faultlat.cluster=-1'], capture_output=True,
                         text=True, timeout=30)
    assert out.returncode == 0, out.stdout + out.stderr
    fields = faultlat.parse_result(out.stdout)
    res = fields['result']
    assert res['touches'] > 1000 and res['errors'] == 0
    # percentiles are ordered and the mean is inside the range
    assert res['touch_p50_ns'] <= res['touch_p90_ns'] <= \
        res['touch_p99_ns'] <= res['max_ns'] * 1.07
    assert fields['start']['mib'] == 8 and 'done' in fields


def test_resume_keeps_whole_repeats_and_runs_the_rest():
    cases = [('memstore', 'rr1'), ('nbdkit', 'rr1')]
    order = discipline.blocked_order(cases, 4, 1)
    case_of = lambda r: (r['server'], r['workload'])   # noqa: E731
    stored = [{'server': s, 'workload': w, 'repeat': rep}
              for (s, w), rep in order[:5]]       # repeats 0, 1 and half 2
    left, kept = bm.resume_order(order, stored, case_of)
    assert [r['repeat'] for r in kept] == [0, 0, 1, 1]
    # the same pairs in the same order as a run that never stopped
    assert left == order[4:]
    assert bm.resume_order(order, [], case_of) == (order, [])


def test_a_compared_memstore_build_is_paired_with_this_one_not_judged():
    names = ['memstore', 'memstore-before', 'nbdkit-malloc']
    assert bm.pairs_of(names) == [('memstore', 'memstore-before'),
                                  ('memstore', 'nbdkit-malloc')]
    assert not bm.judged('memstore', 'memstore-before')
    runs = _runs([2000, 2100, 1900], [1000, 1000, 1000])
    for r in [r for r in runs if r['server'] == 'memstore']:
        runs.append(dict(r, server='memstore-before', iops=r['iops'] * 2))
    cases = bm.analyse(runs, names)
    c = cases[0]
    # this build at half the compared one's IOPS, in every repeat
    assert c['ratios_memstore_to']['memstore-before']['iops']['mean'] == \
        pytest.approx(0.5)
    # the goal stays judged on nbdkit alone
    assert set(c['goal']) == {'nbdkit-malloc'}
    assert c['goal_verdict'] == 'met'
    assert bm.compared_line({'compared_binary': '/old'}).endswith(
        '`/old` (`--compare-binary`)')
    assert bm.compared_line({}) is None
