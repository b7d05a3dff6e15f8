"""The simulator's JSON keeps Neat's small figures."""

import json
import math

import numpy as np

from memmut.simulator import report


def test_small_figures_keep_six_significant_digits(tmp_path):
    path = tmp_path / 'r.json'
    report.write_json(path, {'slav': 8.7312345e-08, 'esv': np.float64(
        2.7e-05), 'hosts': 10.8970123456, 'zero': 0.0, 'neg': -3.3e-9,
        'nan': float('nan'), 'list': [1.23456789e-7, 2]})
    got = json.loads(path.read_text())
    # six decimals would have written 0 for these
    assert got['slav'] == 8.73123e-08 and got['neg'] == -3.3e-09
    assert got['esv'] == 2.7e-05 and got['list'] == [1.23457e-07, 2]
    # everyday sizes keep six decimals
    assert got['hosts'] == 10.897012 and got['zero'] == 0.0
    assert math.isnan(got['nan'])
