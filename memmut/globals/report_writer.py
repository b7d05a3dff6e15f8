"""Group commit of the agents' reports (issue 19: the controller at scale).

The controller's RPC server runs each ``report`` call in a thread of its
pool. Stored one transaction each, a report cost the controller about 5 ms
of CPU and PostgreSQL about 7 ms (``tests/benchmarks/results/ingest.md``):
per-statement and per-commit work, not per row. :class:`ReportWriter`
gives the calls one writer thread: a call queues its report and waits;
the writer takes every report queued meanwhile (up to ``max_batch``) and
stores them in one transaction (:meth:`memmut.db.api.Database.
store_reports`), then answers each call. No report waits for a batch to
fill: under light load every batch is one report, stored as soon as it
arrives; under load the reports that came while a batch was written make
the next one.

An agent is answered only after its report is committed, as before, so
nothing acknowledged can be lost. A batch the database refuses is stored
again report by report, so one report the database rejects fails its own
call only (the agent keeps it), not the calls that shared its batch.
"""

import collections
import threading

from oslo_log import log as logging

LOG = logging.getLogger(__name__)


class _Call:
    __slots__ = ('report', 'done', 'stored', 'error')

    def __init__(self, report):
        self.report = report
        self.done = threading.Event()
        self.stored = None
        self.error = None


class ReportWriter:
    """One writer thread storing the queued reports in batches.

    ``store_many(reports) -> [bool]`` stores a list in one transaction;
    ``store_one(report) -> bool`` one alone (the fallback after a batch
    failed). With ``max_batch`` 1 there is no thread: :meth:`store` calls
    ``store_one`` in the caller's thread, as before group commit.
    """

    def __init__(self, store_many, store_one, max_batch):
        if max_batch < 1:
            raise ValueError('max_batch must be at least 1')
        self._store_many = store_many
        self._store_one = store_one
        self.max_batch = max_batch
        self._queue = collections.deque()
        self._cond = threading.Condition()
        self._thread = None
        self._stopping = False
        # batches written and reports in them (the log's and tests'
        # evidence that batches form under load)
        self.batches = 0
        self.reports = 0

    @property
    def running(self):
        return self._thread is not None

    def start(self):
        if self.max_batch == 1 or self._thread is not None:
            return
        self._stopping = False
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name='memmut-controller-reports')
        self._thread.start()

    def stop(self):
        """Store what is queued, then end the thread."""
        thread = self._thread
        if thread is None:
            return
        with self._cond:
            self._stopping = True
            self._cond.notify()
        thread.join()
        self._thread = None
        if self.batches:
            LOG.info('Report writer stopped: %d reports in %d batches',
                     self.reports, self.batches)

    def store(self, report):
        """Store ``report`` (False: already known); raises what storing
        it raised (e.g. :class:`memmut.db.api.DBError`)."""
        if self._thread is None:
            return self._store_one(report)
        call = _Call(report)
        with self._cond:
            if self._stopping:
                call = None
            else:
                self._queue.append(call)
                self._cond.notify()
        if call is None:             # stopping: no writer to wait for
            return self._store_one(report)
        call.done.wait()
        if call.error is not None:
            raise call.error
        return call.stored

    def _take(self):
        with self._cond:
            while not self._queue and not self._stopping:
                self._cond.wait()
            n = min(self.max_batch, len(self._queue))
            return [self._queue.popleft() for _ in range(n)]

    def _run(self):
        while True:
            batch = self._take()
            if not batch:            # stopping and nothing left
                return
            self._write(batch)

    def _write(self, batch):
        try:
            results = self._store_many([c.report for c in batch])
        except Exception as e:
            if len(batch) == 1:
                batch[0].error = e
            else:
                LOG.warning('Storing %d reports together failed (%s); '
                            'storing them one by one', len(batch), e)
                self._one_by_one(batch)
        else:
            for call, stored in zip(batch, results):
                call.stored = stored
            self.batches += 1
            self.reports += len(batch)
        for call in batch:
            call.done.set()

    def _one_by_one(self, batch):
        for call in batch:
            try:
                call.stored = self._store_one(call.report)
            except Exception as e:
                call.error = e
