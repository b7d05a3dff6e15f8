"""Best Fit Decreasing on CPU and memory, worked by hand."""

from memmut.consolidation import loader
from memmut.consolidation import placement as p


def test_available_resources():
    assert p.get_available_resources(0.8, {'a': 50}, {'a': 100}) == \
        {'a': 30.0}


def test_bfd_best_fit_on_cpu_checking_memory():
    # Available: h1 cpu 300 ram 1000, h2 cpu 500 ram 100, h3 cpu 900 ram
    # 5000. VMs by decreasing CPU: v1 400 (ram 200), v2 250 (ram 50),
    # v3 100 (ram 900).
    # v1: fits h3 only (h1 lacks CPU, h2 memory) -> h3 (cpu 500, ram 4800)
    # v2: fits h1 (300), h2 (500), h3 (500): least CPU h1 -> h1 (50, 950)
    # v3: h1 has too little CPU now; h2 too little memory -> h3
    mapping = p.best_fit_decreasing(
        1, {'h1': 300, 'h2': 500, 'h3': 900},
        {'h1': 1000, 'h2': 100, 'h3': 5000}, {}, {},
        {'v1': [400], 'v2': [250], 'v3': [100]},
        {'v1': 200, 'v2': 50, 'v3': 900})
    assert mapping == {'v1': 'h3', 'v2': 'h1', 'v3': 'h3'}


def test_bfd_uses_the_mean_of_the_last_n_cpu_values():
    # last 2 means: v1 (100 + 500) / 2 = 300 -> only h2 fits
    mapping = p.best_fit_decreasing(
        2, {'h1': 250, 'h2': 400}, {'h1': 10, 'h2': 10}, {}, {},
        {'v1': [900, 100, 500]}, {'v1': 1})
    assert mapping == {'v1': 'h2'}


def test_bfd_switches_on_the_smallest_inactive_host_when_needed():
    mapping = p.best_fit_decreasing(
        1, {'h1': 100}, {'h1': 100}, {'big': 1000, 'small': 500},
        {'big': 1000, 'small': 500}, {'v1': [300], 'v2': [50]},
        {'v1': 100, 'v2': 50})
    # v1 does not fit h1 -> 'small' is switched on; v2 fits h1 (100) and
    # small (200): h1 has less CPU left.
    assert mapping == {'v1': 'small', 'v2': 'h1'}


def test_bfd_is_all_or_nothing():
    assert p.best_fit_decreasing(
        1, {'h1': 100}, {'h1': 100}, {}, {}, {'v1': [50], 'v2': [60]},
        {'v1': 10, 'v2': 10}) == {}


def test_factory_applies_thresholds_to_active_and_inactive_hosts():
    alg = loader.build('placement', 'best_fit_decreasing', 300, 0,
                       {'cpu_threshold': 0.8, 'ram_threshold': 0.5,
                        'last_n_vm_cpu': 1})
    # h1: 0.8 * 1000 - 700 = 100 MHz free; 0.5 * 100 - 10 = 40 MiB free.
    # v (90 MHz, 45 MiB) lacks memory on h1 -> 'off' switched on, offered
    # at 0.8 * 1000 and 0.5 * 100 = 50 MiB.
    mapping, _ = alg({'h1': 700}, {'h1': 1000}, {'h1': 10}, {'h1': 100},
                     {'off': 1000}, {'off': 100}, {'v': [90]}, {'v': 45})
    assert mapping == {'v': 'off'}
    # 55 MiB fits nowhere once thresholds apply: nothing placed
    mapping, _ = alg({'h1': 700}, {'h1': 1000}, {'h1': 10}, {'h1': 100},
                     {'off': 1000}, {'off': 100}, {'v': [90]}, {'v': 55})
    assert mapping == {}
