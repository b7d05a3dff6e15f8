"""tools/evaluation_summary.py: the issue-20 table from result files,
on synthetic files."""

import json

import pytest

from tests import common

es = common.tool_module('evaluation_summary')

VERSIONS = {'qemu': '7.2', 'memmut_commit': 'abc'}


class FakeLoader:
    def __init__(self, now, revs=None):
        self.now, self.revs = now, revs or {}

    def load(self, path, rev=None):
        if rev is None:
            return self.now.get(path)
        return self.revs.get((path, rev))


def _summary(values):
    from tests.benchmarks import discipline
    return discipline.summarize(values)


def test_rows_give_interval_versions_before_and_verdict():
    now = {'a.json': {'discipline': {'versions': VERSIONS},
                      'x': _summary([1.0, 1.1, 0.9, 1.0]),
                      'one': 0.4, 'lost': 0}}
    revs = {('a.json', 'previous'): {'x': 2.0}}
    specs = [
        es.spec('a.json', 'x', lambda d: d['x'], goal=(None, 1.5),
                goal_text='<= 1.5', before=('a.json', 'previous',
                                            lambda d: d['x'])),
        es.spec('a.json', 'one run', lambda d: d['one'], goal=(None, 1.0)),
        es.spec('a.json', 'lost', lambda d: d['lost'], fmt='d',
                goal=(0, 0), count=True),
        es.spec('b.json', 'absent', lambda d: d['y'], goal=(1, None)),
    ]
    rows = es.build_rows(FakeLoader(now, revs), specs)
    x, one, lost, absent = rows
    assert x.value == '1.00' and x.n == '4' and x.versions == 'yes'
    assert x.interval.startswith('[0.') and x.verdict == 'met'
    assert x.before == '2.00 (n=1, previous version)'
    # n = 1: no interval, never met
    assert one.interval == 'none (n=1)' and one.verdict == 'undecided'
    assert lost.interval == 'exact count' and lost.verdict == 'met'
    assert absent.value == 'missing' and absent.verdict == 'no data'
    assert absent.versions == '-'
    assert es.lacking(rows) == [('a.json', ['no interval']),
                                ('b.json', ['figure missing'])]
    md = es.table(rows)
    assert md.count('\n') == len(rows) + 1


def test_a_goal_outside_the_interval_is_not_met():
    now = {'a.json': {'x': _summary([5.0, 5.2, 4.8])}}
    rows = es.build_rows(FakeLoader(now), [
        es.spec('a.json', 'x', lambda d: d['x'], goal=(None, 3.0))])
    assert rows[0].verdict == 'not met'


def test_versions_found_in_nested_records_and_every_log_line():
    assert es.has_versions({'a': {'discipline': {'versions': VERSIONS}}})
    assert es.has_versions({'machine': VERSIONS})
    assert not es.has_versions({'machine': 'a shared machine'})
    assert es.has_versions([{'versions': VERSIONS}, {'versions': VERSIONS}])
    assert not es.has_versions([{'versions': VERSIONS}, {'versions': {}}])


def test_as_summary_and_interval_detection():
    assert es.as_summary(3)['n'] == 1
    s = es.as_summary({'n': 3, 'mean': 2.0, 'low': 1.0, 'high': 4.0})
    assert s['half_width'] == pytest.approx(1.5)
    assert es.has_interval({'deep': [{'n': 2, 'low': 0, 'high': 1}]})
    assert not es.has_interval({'n': 1, 'mean': 3})


def test_real_specs_survive_missing_files():
    rows = es.build_rows(FakeLoader({}))
    assert len(rows) == len(es.SPECS)
    assert all(r.value == 'missing' for r in rows)


def test_other_files_groups_what_the_table_leaves_out(tmp_path):
    base = tmp_path / es.RESULTS_REL
    (base / 'sub').mkdir(parents=True)
    (base / 'in.json').write_text(json.dumps({'x': 1}))
    (base / 'sub' / 'a.json').write_text(json.dumps(
        {'s': {'n': 3, 'low': 1, 'high': 2}, 'versions': VERSIONS}))
    (base / 'sub' / 'b.jsonl').write_text('{"y": 1}\n')
    loader = es.Loader(str(tmp_path))
    rows = [es.Row('in.json', 'x', '1', '1', '', 'no', '-', '-', '-', None)]
    assert es.other_files(loader, rows, str(tmp_path)) == [
        ('sub', 2, 1, 1, '')]


def test_splice_keeps_the_hand_written_text():
    old = 'intro\n%s\nold table\n%s\nnotes\n' % (es.BEGIN, es.END)
    new = '%s\nnew table\n%s\n' % (es.BEGIN, es.END)
    out = es.splice(old, new)
    assert out.startswith('intro\n') and out.endswith('notes\n')
    assert 'new table' in out and 'old table' not in out
    assert es.splice(None, new) == new


def test_versions_not_recorded_names_the_commit_not_yes():
    note = 'run at f403985 (Badis); read from git history; rest unknown'
    old = {'versions_not_recorded': note, 'x': 1.0}
    mixed = {'versions_not_recorded': note, 'x': 1.0,
             'runs': [{'versions': VERSIONS}, {}]}
    assert es.versions_cell(old) == 'not recorded (run at f403985 (Badis))'
    assert es.versions_cell(mixed).startswith('partly; the rest not '
                                              'recorded (run at f403985')
    assert es.versions_cell({'x': 1.0}) == 'no'
    assert es.versions_cell(None) == '-'
    specs = [es.spec('old.json', 'x', lambda d: d['x'])]
    rows = es.build_rows(FakeLoader({'old.json': old}), specs)
    assert rows[0].versions == 'not recorded (run at f403985 (Badis))'
    assert es.lacking(rows) == [('old.json', [
        'no interval', 'versions not recorded (run at f403985 (Badis))'])]


def test_fault_events_quote_the_runs_interval_when_repeated():
    runs = _summary([1.0, 1.2, 1.4])
    events = _summary([1.0, 1.1, 1.2, 1.3, 1.4, 1.5])
    doc = {'memstore': {'t': {'summary': events, 'summary_runs': runs,
                              'p50': 1.2}}}
    assert es._events(doc, 'memstore', 't') is runs
    # one run: the interval over its events, or its p50 without raw times
    doc['memstore']['t']['summary_runs'] = _summary([1.2])
    assert es._events(doc, 'memstore', 't') is events
    assert es._events({'memstore': {'t': {'p50': 2.3}}}, 'memstore',
                      't') == 2.3


def test_badis_figures_prefer_the_repeats_interval():
    iv = {'n': 3, 'mean': 2.9, 'low': 2.6, 'high': 3.2}
    repeated = {'summary': {'badis': {'intervals': {'booked_all': iv},
                                      'mean_error_pct_booked': 3.0}}}
    single = {'summary': {'badis': {'mean_error_pct_booked': 3.05}}}
    get = es._badis_interval
    assert get(repeated, 'badis', 'booked_all', 'mean_error_pct_booked') \
        is iv
    # a file of single runs: its one figure, never a made-up interval
    assert get(single, 'badis', 'booked_all',
               'mean_error_pct_booked') == 3.05
    # a figure only repeats have: nothing from single runs
    assert get(single, 'badis', 'probe_booked_all') is None
    assert get(repeated, 'zballoond', 'booked_all',
               'mean_error_pct_booked') is None
