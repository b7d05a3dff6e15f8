"""Windows and periods as durations (memmut.consolidation.algorithm)."""

import pytest

from memmut.consolidation import algorithm
from memmut.consolidation import loader


@pytest.mark.parametrize('text, seconds', [
    ('90s', 90), ('15min', 900), ('4h', 14400), ('1d', 86400),
    ('1w', 604800), ('1.5h', 5400), (' 2 hours ', 7200), ('1 day', 86400),
    ('0d', 0), ('30 Minutes', 1800)])
def test_durations_in_seconds(text, seconds):
    assert algorithm.duration_seconds(text) == seconds


@pytest.mark.parametrize('text', ['', 'd', '1', '1y', '-1h', '1h30min',
                                  'one day', '1e3s'])
def test_what_is_no_duration_is_refused_with_the_accepted_units(text):
    with pytest.raises(ValueError, match='is not a duration .*"1d"'):
        algorithm.duration_seconds(text)


def test_a_duration_is_counted_in_samples_of_the_time_step():
    p = {'period': '1d', 'lead': '1h', 'w': '7min', 'tiny': '10s',
         'zero': '0h'}
    assert algorithm.samples(p, 'period', 300) == 288
    assert algorithm.samples(p, 'period', 1800) == 48
    assert algorithm.samples(p, 'period', 60) == 1440
    assert algorithm.samples(p, 'lead', 300) == 12
    assert algorithm.samples(p, 'w', 300) == 1       # 1.4 rounds to 1
    assert algorithm.samples(p, 'tiny', 300) == 1    # positive: >= 1
    assert algorithm.samples(p, 'zero', 300) == 0


def test_a_number_stays_a_number_of_samples_whatever_the_step():
    p = {'n': 288, 'f': 12.0}
    assert algorithm.samples(p, 'n', 60) == 288
    assert algorithm.samples(p, 'f', 1800) == 12


@pytest.mark.parametrize('value, message', [
    (1.5, 'whole number of samples'), (True, 'number of samples or a '
                                             'duration'),
    (None, 'number of samples or a duration'), ([1], 'number of samples'),
    (0, 'at least 1 sample'), ('1 eon', 'is not a duration')])
def test_bad_values_say_which_parameter(value, message):
    with pytest.raises(ValueError, match='^window.*' + message):
        algorithm.samples({'window': value}, 'window', 300, minimum=1)


def test_a_duration_needs_a_time_step():
    with pytest.raises(ValueError, match='positive time step'):
        algorithm.samples({'w': '1h'}, 'w', 0)


def _overloaded(params, time_step, history):
    decide = loader.build('overload', 'forecast_threshold', time_step, 0.0,
                          params)
    return decide(history)[0]


def test_the_seasonal_period_keeps_a_day_when_the_interval_changes():
    # At 30-minute samples a day is 48 samples: yesterday's rise at this
    # time (samples 48 ago, within the hour after) is found with "1d";
    # with 288 samples the same history is six days, which it does not
    # hold, so nothing fires.
    day = 48
    history = [0.5] * (2 * day)
    history[-day] = 0.5
    history[-day + 1] = 0.9          # rose by 0.4 within the next hour
    history[-1] = 0.6                # now: 0.6 + 0.4 > 0.95
    params = {'threshold': 0.95, 'period': '1d', 'lead': '1h'}
    assert _overloaded(params, 1800, history)
    assert not _overloaded(dict(params, period=288, lead=12), 1800,
                           history)
    # the same in samples of the interval
    assert _overloaded(dict(params, period=48, lead=2), 1800, history)


def test_the_defaults_are_the_old_sample_counts_at_300_s():
    # Defaults given as durations plan exactly as the sample counts they
    # replace did at the default interval.
    spec = loader.AlgorithmSpec()
    p = dict(spec.effective()['memory_overload'][1])
    assert (algorithm.samples(p, 'period', 300),
            algorithm.samples(p, 'lead', 300)) == (288, 12)
    place = spec.effective()['placement'][1]
    assert algorithm.samples(place, 'window', 300) == 48
    assert algorithm.samples(place, 'memory_window', 300) == 288
    under = spec.effective()['underload'][1]
    assert algorithm.samples(under, 'window', 300) == 288
    sel = spec.effective()['vm_selection'][1]
    assert algorithm.samples(sel, 'window', 300) == 12
