"""The simulated hypervisor (the embedded default: 1 GiB guests, 100
sampled pages, 10 s rounds), W1-W5 x 8 seeds: ``calibration_sample_point``
upper, estimate, and estimate with ``calibrate_rounds`` 3, at 100 pages;
estimate at 400 pages (the default since stop 60); per run the mean
settled estimate error, the mean shortfall of the balloon under the truth
and the mean memory saved (MiB), then paired differences to ``upper``
(mean +- 95 % half-width). From the repository::

    PYTHONPATH=. .tox/py3/bin/python \\
        tests/benchmarks/results/badis50/sim_calibration.py
"""

import statistics

from tests import common
from tests.unit.agent import test_estimation as te

MIB = 1024
CONFIGS = {'upper': {'calibration_sample_point': 'upper',
                     'sample_pages': 100},
           'estimate': {'calibration_sample_point': 'estimate',
                        'sample_pages': 100},
           'estimate3': {'calibration_sample_point': 'estimate',
                         'calibrate_rounds': 3, 'sample_pages': 100},
           'estimate400': {'calibration_sample_point': 'estimate',
                           'sample_pages': 400}}


def run(options, shape, seed):
    conf = common.private_conf(
        badis=dict({'round_interval': 10.0, 'time_slice': 30.0}, **options),
        simulated_hypervisor={'step_seconds': 300, 'seed': seed})
    _, trace = te.sim_loop(shape, 170, conf=conf)
    errs = [abs(e.wss_kb - truth) for t, truth, bal, e in trace
            if e is not None and t % 300 > 90]
    short = [max(0, truth - bal) for t, truth, bal, e in trace]
    saved = [1024 * MIB - bal for t, truth, bal, e in trace]
    return (statistics.mean(errs) / MIB, statistics.mean(short) / MIB,
            statistics.mean(saved) / MIB)


def main():
    res = {name: [run(opts, shape, seed)
                  for shape in ('W1', 'W2', 'W3', 'W4', 'W5')
                  for seed in range(8)]
           for name, opts in CONFIGS.items()}
    for name, v in res.items():
        print('%-11s error %.1f MiB, short %.2f MiB, saved %.1f MiB' % (
            name, *(statistics.mean(x[i] for x in v) for i in range(3))))
    for name in ('estimate', 'estimate3', 'estimate400'):
        d = [tuple(b[i] - a[i] for i in range(3))
             for a, b in zip(res['upper'], res[name])]
        for i, what in enumerate(('error', 'short', 'saved')):
            xs = [x[i] for x in d]
            half = 2.02 * statistics.stdev(xs) / len(xs) ** 0.5
            print('%s - upper: %s %+.2f +- %.2f MiB (n=%d)'
                  % (name, what, statistics.mean(xs), half, len(xs)))


if __name__ == '__main__':
    main()
