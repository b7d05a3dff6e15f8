import os

from oslo_config import generator

from memmut.conf import opts

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def test_every_option_has_help():
    for group, group_opts in opts.list_opts():
        for opt in group_opts:
            assert opt.help and len(opt.help) > 20, (group, opt.name)


def test_sample_config_is_up_to_date(tmp_path):
    out = tmp_path / 'memmut.conf.sample'
    conf = os.path.join(ROOT, 'etc/memmut/memmut-config-generator.conf')
    generator.main(['--config-file', conf, '--output-file', str(out)])
    with open(os.path.join(ROOT, 'etc/memmut/memmut.conf.sample')) as f:
        committed = f.read()
    assert out.read_text() == committed, (
        'etc/memmut/memmut.conf.sample is stale: run "tox -e genconfig"')


def test_renamed_and_merged_options_are_still_read_from_old_places(tmp_path):
    from oslo_config import cfg

    from memmut import conf as memmut_conf
    path = tmp_path / 'memmut.conf'
    path.write_text('[sim]\nvms = old:512:W1\n'
                    '[consolidation]\nheadroom_kb = 4096\n')
    conf = cfg.ConfigOpts()
    memmut_conf.register_opts(conf)
    conf([], project='memmut', default_config_files=[str(path)])
    assert conf.simulated_hypervisor.vms == ['old:512:W1']
    assert conf.badis.headroom_kb == 4096
