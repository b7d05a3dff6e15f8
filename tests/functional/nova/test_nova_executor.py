"""memmut's consolidation rounds and nova executor against a real nova API.

The cases live in ``nova_cases.py`` and run under nova's own functional
fixtures (API, conductor, scheduler, placement, two fake-driver computes)
in a child process, one per case: nova's test package picks its
concurrency mode when imported and must be imported before memmut and
oslo.messaging, which this process has already loaded (see that module's
docstring). Needs nova and its test requirements (openstack-placement,
oslotest, wsgi-intercept: test-requirements.txt); no root, no VM.
"""

import importlib.util
import os
import re
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
CASES = (
    'test_round_live_migrates_a_server_through_nova',
    'test_a_round_plans_around_a_live_migration_still_running',
    'test_a_failing_migration_is_retried_then_recorded_failed',
    'test_a_destination_down_is_refused_and_recorded',
    'test_placement_memory_ratio_from_working_sets',
    'test_a_sleeping_host_is_powered_on_and_receives_the_vm',
)


def test_nova_test_requirements_are_installed():
    missing = [m for m in ('nova', 'placement', 'oslotest', 'wsgi_intercept')
               if importlib.util.find_spec(m) is None]
    assert not missing, ('install test-requirements.txt: missing %s'
                         % ', '.join(missing))


@pytest.mark.timeout(600)
@pytest.mark.parametrize('case', CASES)
def test_against_nova(case):
    env = dict(os.environ, OS_NOVA_DISABLE_EVENTLET_PATCHING='1',
               PYTHONDONTWRITEBYTECODE='1')
    node = '%s::NovaExecutorTest::%s' % (
        os.path.join(HERE, 'nova_cases.py'), case)
    done = subprocess.run(
        [sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider',
         # Not tests/conftest.py: it imports memmut first.
         '--confcutdir', HERE, node],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=540)
    lines = done.stdout.strip().splitlines()
    passed = bool(lines) and re.search(r'\b1 passed\b', lines[-1])
    assert done.returncode == 0 and passed, (
        'nova case %s failed (exit %d):\n%s\n%s' % (
            case, done.returncode, done.stdout[-30000:],
            done.stderr[-5000:]))
