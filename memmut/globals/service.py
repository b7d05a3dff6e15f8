"""The controller as a service: its RPC server, housekeeping and
consolidation rounds."""

import threading
import time

from oslo_log import log as logging

from memmut.agent import rpcapi as agent_rpcapi
from memmut.globals import leader
from memmut.globals import manager
from memmut.globals import placement
from memmut.globals import rounds
from memmut import rpc

LOG = logging.getLogger(__name__)
PURGE_EVERY = 600.0


class ControllerService:
    def __init__(self, conf, transport, db):
        self.conf = conf
        self.db = db
        self.manager = manager.ControllerManager(
            db, agent_rpcapi.AgentAPI(transport, conf), conf,
            start_round=self.start_round)
        self._server = rpc.get_server(transport, conf.controller_topic,
                                      conf.host, [self.manager])
        self._stop = threading.Event()
        self._thread = None
        self._rounds_thread = None
        self._round_threads = []
        self._started = False
        # Stopping the service also ends the waits of a running round.
        # Several controllers may share the database: rounds run in the
        # one holding the consolidation lease (memmut.globals.leader).
        self.leadership = leader.Leadership(
            db, leader.holder_id(conf.host), conf.controller.leader_lease)
        self.rounds = rounds.RoundRunner(conf, db, stop=self._stop,
                                         leader=self.leadership)
        self._rollup_lease = leader.Leadership(
            db, self.leadership.holder, 3 * PURGE_EVERY, name='rollup')

    def _housekeeping_period(self):
        raw = self.conf.controller.raw_sample_retention
        return min(PURGE_EVERY, max(5.0, raw / 4.0)) if raw else PURGE_EVERY

    def _housekeep_once(self, now=None):
        """Roll old raw VM samples up and purge what is past retention;
        ``(rolled up, purged)``. With rollups, only the holder of the
        ``rollup`` lease does it (two controllers rolling the same
        samples up would count them twice)."""
        c = self.conf.controller
        now = time.time() if now is None else now
        rolled = 0
        if c.raw_sample_retention:
            if not self._rollup_lease.acquire():
                return 0, 0
            rolled = self.db.rollup_samples(
                now - c.raw_sample_retention,
                self.conf.consolidation.interval)
            purged = self.db.purge_rollups(now - c.rollup_retention)
        else:
            purged = 0
        purged += self.db.purge_samples(now - c.sample_retention)
        return rolled, purged

    def _housekeeping(self):
        while not self._stop.wait(self._housekeeping_period()):
            try:
                rolled, purged = self._housekeep_once()
                if rolled or purged:
                    LOG.info('Rolled %d VM samples up, purged %d rows past '
                             'retention', rolled, purged)
            except Exception:
                LOG.exception('Rolling up or purging old samples failed; '
                              'will retry')

    def _reconcile_once(self):
        try:
            applied = self.manager.protocol.reconcile()
            if applied:
                LOG.info('Reconciliation moved %d remote allocation(s)',
                         len(applied))
        except Exception:
            LOG.exception('Reconciling remote allocations failed; will '
                          'retry in %d s',
                          self.conf.controller.reconcile_interval)

    def _reconciliation(self):
        # Once at start: allocations left open by a controller that
        # stopped (or crashed) in the middle are judged on the reports.
        self._reconcile_once()
        while not self._stop.wait(self.conf.controller.reconcile_interval):
            self._reconcile_once()

    def _placement_ratios(self):
        updater = placement.RatioUpdater(self.conf, self.db)
        interval = self.conf.placement.update_interval
        while not self._stop.wait(interval):
            try:
                updater.update()
            except Exception:
                LOG.exception('Updating placement ratios failed; next in '
                              '%d s', interval)

    def _scheduled_rounds(self):
        interval = self.conf.consolidation.interval
        if self.conf.consolidation.round_pacing == rounds.AFTER_EXECUTION:
            # A round executes its migrations to the end; the next one
            # starts an interval later.
            while not self._stop.wait(interval):
                self._scheduled_round(interval)
            return
        # On the clock: a round every interval, in a thread of its own,
        # planning around the migrations earlier rounds still execute.
        next_at = time.monotonic() + interval
        while not self._stop.wait(max(0.0, next_at - time.monotonic())):
            next_at += interval
            late = time.monotonic() - next_at
            if late > 0:    # the machine slept: no burst of rounds
                next_at += interval * (1 + int(late // interval))
            self._round_threads = [t for t in self._round_threads
                                   if t.is_alive()]
            thread = threading.Thread(
                target=self._scheduled_round, args=(interval,),
                name='memmut-controller-round', daemon=True)
            self._round_threads.append(thread)
            thread.start()

    def _scheduled_round(self, interval):
        try:
            if self.rounds.due(interval):
                self.rounds.run()
        except Exception:       # run() records its errors; be sure
            LOG.exception('Consolidation round failed; next in %d s',
                          interval)

    def run_round(self, dry_run=None):
        """Run a consolidation round now (see :mod:`memmut.globals.rounds`).

        ``dry_run`` None takes ``[consolidation] dry_run``. Returns the
        :class:`memmut.globals.rounds.RoundResult`; never raises.
        """
        return self.rounds.run(dry_run=dry_run)

    def start_round(self, dry_run=None, timeout=30.0):
        """Start a round in a thread of its own (memmut-api's POST
        /rounds, over RPC); return once it is recorded.

        ``{'round_id': id}``, or ``{'round_id': None, 'busy': ...,
        'reason': ...}`` when it did not start (another round runs, or
        the database refused the row).
        """
        started = threading.Event()
        outcome = {}

        def on_started(round_id):
            outcome['round_id'] = round_id
            started.set()

        def run():
            result = self.rounds.run(dry_run=dry_run, started=on_started)
            if 'round_id' not in outcome:
                outcome.update(round_id=None,
                               busy=result.status == rounds.BUSY,
                               reason=result.reason)
            started.set()

        threading.Thread(target=run, name='memmut-controller-round',
                         daemon=True).start()
        if not started.wait(timeout):
            return {'round_id': None, 'busy': False,
                    'reason': 'the round was not recorded within %d s'
                              % timeout}
        return dict(outcome)

    def start(self):
        self.rounds.recover()
        self.manager.reports.start()
        self._server.start()
        self._started = True
        self._thread = threading.Thread(target=self._housekeeping,
                                        name='memmut-controller-purge',
                                        daemon=True)
        self._thread.start()
        self._reconcile_thread = threading.Thread(
            target=self._reconciliation,
            name='memmut-controller-reconcile', daemon=True)
        self._reconcile_thread.start()
        self._placement_thread = None
        if self.conf.placement.update_allocation_ratio:
            self._placement_thread = threading.Thread(
                target=self._placement_ratios,
                name='memmut-controller-placement', daemon=True)
            self._placement_thread.start()
            LOG.info('Placement MEMORY_MB allocation ratios every %d s',
                     self.conf.placement.update_interval)
        if self.conf.consolidation.scheduled_rounds:
            self._rounds_thread = threading.Thread(
                target=self._scheduled_rounds,
                name='memmut-controller-rounds', daemon=True)
            self._rounds_thread.start()
            LOG.info('Consolidation rounds every %d s (pacing %s)%s',
                     self.conf.consolidation.interval,
                     self.conf.consolidation.round_pacing,
                     ' (dry run)' if self.conf.consolidation.dry_run else '')
        LOG.info('Controller started on topic %s', self.conf.controller_topic)

    def stop(self):
        self._stop.set()
        # Stopping a server that never started blocks in oslo.messaging.
        if self._started:
            self._server.stop()
            # (the calls it waits for wait for the report writer)
            self._server.wait()
            self._started = False
        self.manager.reports.stop()
        if self._thread:
            self._thread.join()
        if self._rounds_thread:
            self._rounds_thread.join()
        for thread in self._round_threads:
            thread.join()
        # Another controller takes over at its next round.
        self.rounds.release()
        self._rollup_lease.release()
        if getattr(self, '_reconcile_thread', None):
            self._reconcile_thread.join()
        if getattr(self, '_placement_thread', None):
            self._placement_thread.join()
