"""Rounds started for memmut-api (RPC 1.1 start_round): the answer comes
once the round is recorded; a busy controller says so."""

import threading

import pytest

from memmut.globals import manager
from memmut.globals import rounds
from memmut.globals import service as controller_service
from tests.unit.globals.test_rounds import round_conf


def _service(runner):
    svc = controller_service.ControllerService.__new__(
        controller_service.ControllerService)
    svc.rounds = runner
    return svc


def test_start_round_answers_with_the_recorded_round(db, clock):
    svc = _service(rounds.RoundRunner(round_conf(), db, clock=clock))
    reply = svc.start_round(dry_run=True)
    rnd = db.get_round(reply['round_id'])
    assert rnd.dry_run is True


@pytest.mark.parametrize('pacing, reason', [
    ('clock', 'another round is planning'),
    ('after_execution', 'another round is running')])
def test_start_round_while_another_runs_is_busy(db, clock, pacing, reason):
    runner = rounds.RoundRunner(round_conf(round_pacing=pacing), db,
                                clock=clock)
    runner._lock.acquire()
    try:
        reply = _service(runner).start_round(dry_run=True)
    finally:
        runner._lock.release()
    assert reply == {'round_id': None, 'busy': True, 'reason': reason}


def test_start_round_gives_up_waiting(db, clock):
    gate = threading.Event()

    class Slow:
        def run(self, dry_run=None, started=None):
            gate.wait(5)
            return rounds.RoundResult(None, rounds.FAILED, 'late', False)

    reply = _service(Slow()).start_round(dry_run=False, timeout=0.05)
    gate.set()
    assert reply['round_id'] is None and not reply['busy']


def test_run_reports_the_round_id_before_planning(db, clock):
    seen = []
    result = rounds.RoundRunner(round_conf(), db, clock=clock).run(
        dry_run=True, started=seen.append)
    assert seen == [result.round_id]


def test_manager_start_round_delegates():
    calls = []
    mgr = manager.ControllerManager.__new__(manager.ControllerManager)
    mgr._start_round = lambda dry_run: calls.append(dry_run) or {
        'round_id': 7}
    assert mgr.start_round({}, dry_run=False) == {'round_id': 7}
    assert calls == [False]
    mgr._start_round = None
    assert mgr.start_round({})['round_id'] is None
