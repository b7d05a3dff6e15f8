"""One line per TCG run of this directory (bench_patterns'
patterns.jsonl under tcg_*): vm_over against the twin, % of the booking
saved, what the guest read back from swap (MiB), bad shrinks; then per
pattern and start the defaults of stop 68 (tcg_<pattern>[_rN]) and
pinned_drop_rebase + probe_chain (`rc`, tcg_rc_<pattern>[_rN]) side by
side, paired by round. Usage: python tcg_summary.py"""
import importlib.util
import os

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    'badis68_tcg_summary',
    os.path.join(HERE, '..', 'badis68', 'tcg_summary.py'))
_mod = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_mod)

if __name__ == '__main__':
    _mod.summarize(HERE, 'rc', 'tcg_rc_')
