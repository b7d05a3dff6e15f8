"""bench_remote's figures on synthetic runs: intervals over repeats,
paired ratios to the RAM tier, and goals judged on the whole interval."""

from tests.benchmarks import bench_remote as br
from tests.benchmarks import discipline


def _runs(ram, remote, tier='remote-veth'):
    runs = []
    for k, (a, b) in enumerate(zip(ram, remote)):
        for case, v in (('ram', a), (tier, b)):
            runs.append({'case': case, 'repeat': k,
                         'median_us': {str(n): v * n for n in br.SIZES},
                         'p90_us': {str(n): v * n for n in br.SIZES}})
    return {'cases': ['ram', tier], 'runs': runs}


def test_ratios_are_paired_per_repeat_and_goals_need_the_whole_interval():
    # the machine drifts between repeats; the remote tier is 1.5x the
    # ram tier of the same repeat every time
    r = br.aggregate(_runs([100, 200, 400], [150, 300, 600]))
    ratio = r['ratios']['remote-veth']['1024']
    assert abs(ratio['mean'] - 1.5) < 1e-9
    assert abs(ratio['low'] - 1.5) < 1e-9 and abs(ratio['high'] - 1.5) < 1e-9
    goal = {g['goal'].split()[0]: g for g in r['goals']}
    assert goal['remote-veth']['verdict'] == 'met'
    assert goal['remote-10gbe']['verdict'] == 'not run'
    lat = r['latency']['ram']['1']
    assert lat['n'] == 3 and abs(lat['mean'] - 700 / 3) < 1e-9


def test_a_ratio_whose_interval_straddles_the_goal_is_undecided():
    r = br.aggregate(_runs([100, 100, 100], [150, 260, 190]))
    ratio = r['ratios']['remote-veth']['1024']
    assert ratio['low'] < 2.0 < ratio['high']
    assert r['goals'][1]['verdict'] == 'undecided'
    r = br.aggregate(_runs([100, 100, 100], [300, 320, 310]))
    assert r['goals'][1]['verdict'] == 'not met'


def test_the_report_shows_intervals_and_provenance():
    r = br.aggregate(_runs([100, 110], [300, 320]))
    rec = discipline.Record(seed=3, repeats=2)
    rec.finish()
    r.update(discipline=rec.as_dict(), command='python -m x', date='d',
             binary='/b', cpu='c', info={'remote-veth': {'shaping': 'none'}},
             note='n')
    md = br.markdown(r)
    assert '±' in md and '[' in md and 'versions' in md
    assert 'remote-veth <= 2× ram at 1024 pages: **not met**' in md


def test_a_compared_memstore_gets_its_own_baseline_and_a_versus_ratio():
    now = _runs([100, 200], [150, 300])
    old = _runs([110, 220], [330, 660], tier='remote-veth')
    for r in old['runs']:
        r['case'] += '@before'
    res = br.aggregate({'cases': now['cases'] + [c + '@before'
                                                 for c in old['cases']],
                        'runs': now['runs'] + old['runs']})
    # each memstore's remote tier against its own ram tier
    assert abs(res['ratios']['remote-veth']['1024']['mean'] - 1.5) < 1e-9
    assert abs(res['ratios']['remote-veth@before']['1024']['mean']
               - 3.0) < 1e-9
    # and this memstore against the compared one, tier by tier
    assert abs(res['versus']['remote-veth@before']['1024']['mean']
               - 150 / 330) < 1e-9
    assert abs(res['versus']['ram@before']['1']['mean'] - 100 / 110) < 1e-9
    # the goals are judged on this memstore only
    assert [g['ratio']['mean'] for g in res['goals'] if g['ratio']] == [1.5]
