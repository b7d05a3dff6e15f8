"""The expert knobs of [badis] and [consolidation] are flagged advanced.

The sample configuration lists an operator's choices first and the
estimator's and planner's internal constants and experiment switches
after them, marked "Advanced Option" (oslo.config's ``advanced=True``).
"""
import os
import re

import pytest
from oslo_config import generator

from memmut.conf import badis
from memmut.conf import consolidation

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))

GROUPS = {'badis': badis.opts, 'consolidation': consolidation.opts}

OPERATOR_FACING = [
    ('badis', 'round_interval'),
    ('badis', 'floor_kb'),
    ('badis', 'time_slice'),
    ('badis', 'headroom_kb'),
    ('badis', 'headroom_fraction'),
    ('badis', 'sample_pages'),
    ('badis', 'ws_curve'),
    ('badis', 'swapin_bound_kb_s'),
    ('consolidation', 'scheduled_rounds'),
    ('consolidation', 'interval'),
    ('consolidation', 'dry_run'),
    ('consolidation', 'round_pacing'),
    ('consolidation', 'memory_basis'),
    ('consolidation', 'overload_detection'),
    ('consolidation', 'vm_placement_parameters'),
    ('consolidation', 'power_off_command'),
    ('consolidation', 'power_on_command'),
]

INTERNAL = [
    ('badis', 'vg_entry_grow'),
    ('badis', 'time_slice_from_first'),
    ('badis', 'time_slice_reuse'),
    ('badis', 'zballoond_decrease_fraction'),
    ('badis', 'selfballoon_down_hysteresis'),
    ('badis', 'vg_to_g_rounds'),
    ('badis', 'calibrate_pinned'),
    ('badis', 'ws_curve_rounds'),
    ('badis', 'shrink_floor_step_kb'),
    ('badis', 'hindsight_rounds'),
    ('consolidation', 'prewarm_history'),
    ('consolidation', 'pack_on_shrink_floor'),
]


def _opt(group, name):
    found = [o for o in GROUPS[group] if o.name == name]
    assert len(found) == 1, (group, name)
    return found[0]


@pytest.mark.parametrize('group,name', OPERATOR_FACING)
def test_operator_facing_options_are_not_advanced(group, name):
    assert not _opt(group, name).advanced


@pytest.mark.parametrize('group,name', INTERNAL)
def test_internal_options_are_advanced(group, name):
    assert _opt(group, name).advanced


@pytest.mark.parametrize('group', sorted(GROUPS))
def test_every_advanced_option_keeps_its_help(group):
    advanced = [o for o in GROUPS[group] if o.advanced]
    assert advanced
    for opt in advanced:
        assert opt.help and opt.help.strip(), (group, opt.name)


@pytest.fixture(scope='module')
def sample(tmp_path_factory):
    out = tmp_path_factory.mktemp('sample') / 'memmut.conf.sample'
    conf = os.path.join(ROOT, 'etc/memmut/memmut-config-generator.conf')
    generator.main(['--config-file', conf, '--output-file', str(out)])
    return out.read_text()


def _section(sample, group):
    match = re.search(r'^\[%s\]\n(.*?)(?=^\[|\Z)' % re.escape(group),
                      sample, re.M | re.S)
    assert match, group
    return match.group(1)


def _sample_option_names(section):
    return re.findall(r'^#(\w+) =', section, re.M)


@pytest.mark.parametrize('group', sorted(GROUPS))
def test_sample_lists_operator_options_first(sample, group):
    section = _section(sample, group)
    names = _sample_option_names(section)
    by_name = {o.name: o for o in GROUPS[group]}
    assert sorted(names) == sorted(by_name)
    first = by_name[names[0]]
    assert not first.advanced, first.name
    flags = [by_name[n].advanced for n in names]
    # every operator-facing option before the first advanced one
    assert flags == sorted(flags)
    assert section.count('# Advanced Option: intended for advanced users') \
        == sum(flags)


def test_badis_sample_starts_with_round_interval(sample):
    section = _section(sample, 'badis')
    first_opt = re.search(r'^#\w+ =', section, re.M)
    assert first_opt.group(0) == '#round_interval ='
    assert 'Advanced Option' not in section[:first_opt.start()]
