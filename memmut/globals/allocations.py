"""The life of one remote allocation, and the checks on what agents send.

Pure functions only (no database, no RPC): the controller
(:mod:`memmut.globals.protocol`) applies them and persists the outcome.

State machine (``remote_allocations.state``)::

    requested --granted--> granted --in_use--> active
        |  \\--refused--> refused                 |
        \\--failed--> failed                        |
    granted/active --release--> releasing --freed--> released
    granted/active --reclaim--> reclaiming --detached--> releasing
    reclaiming --freed--> released      (the lender's reclaim timeout)
    any open state --lender_dead--> failed
    any lent state --failed--> failed   (the client's slab failed)

- ``requested``: the row exists, LMC_alloc to the lender is in flight.
- ``granted``: the lender prepared the slab; the client got its device and
  credentials in the GMC_alloc reply but has not yet said it uses it.
- ``active``: the client's report lists the allocation.
- ``releasing``: nobody will use it any more; the lender has to free it
  (LMC_release), which it confirms by answering or by reporting it gone.
- ``reclaiming``: the lender wants it back; the client has to stop using
  it (LMC_reclaim) before the lender may free it, or the lender frees it
  on its own after ``[mutualization] reclaim_timeout`` (the client then
  serves the slab's pages from its backup file at its next access).
- ``released``, ``refused``, ``failed``: closed, nothing is lent.

Events not in :data:`TRANSITIONS` for a state are illegal and raise
:class:`IllegalTransition`; so a late or repeated message never reopens a
closed allocation.
"""

import re

REQUESTED = 'requested'
GRANTED = 'granted'
ACTIVE = 'active'
RELEASING = 'releasing'
RECLAIMING = 'reclaiming'
RELEASED = 'released'
REFUSED = 'refused'
FAILED = 'failed'

STATES = (REQUESTED, GRANTED, ACTIVE, RELEASING, RECLAIMING, RELEASED,
          REFUSED, FAILED)
CLOSED_STATES = (RELEASED, REFUSED, FAILED)
OPEN_STATES = tuple(s for s in STATES if s not in CLOSED_STATES)
# States in which the lender's memory is committed to the allocation.
LENT_STATES = (GRANTED, ACTIVE, RELEASING, RECLAIMING)

# Events: what the controller learnt.
E_GRANTED = 'granted'           # LMC_alloc answered with a device
E_REFUSED = 'refused'           # LMC_alloc answered no
E_FAILED = 'failed'             # LMC_alloc unanswered, cut by a restart,
#                                 or the client's slab failed (GMC_release
#                                 with ``failed``: lender or link dead)
E_IN_USE = 'in_use'             # the client reports it uses the slab
E_RELEASE = 'release'           # GMC_release, or nobody uses it
E_RECLAIM = 'reclaim'           # GMC_reclaim by the lender
E_DETACHED = 'detached'         # the client stopped using it (reclaim)
E_FREED = 'freed'               # the lender freed the slab
E_LENDER_DEAD = 'lender_dead'   # the lender stopped reporting

EVENTS = (E_GRANTED, E_REFUSED, E_FAILED, E_IN_USE, E_RELEASE, E_RECLAIM,
          E_DETACHED, E_FREED, E_LENDER_DEAD)

TRANSITIONS = {
    (REQUESTED, E_GRANTED): GRANTED,
    (REQUESTED, E_REFUSED): REFUSED,
    (REQUESTED, E_FAILED): FAILED,
    (REQUESTED, E_LENDER_DEAD): FAILED,
    (GRANTED, E_IN_USE): ACTIVE,
    (GRANTED, E_RELEASE): RELEASING,
    (GRANTED, E_RECLAIM): RECLAIMING,
    (GRANTED, E_LENDER_DEAD): FAILED,
    (GRANTED, E_FAILED): FAILED,
    (ACTIVE, E_IN_USE): ACTIVE,
    (ACTIVE, E_RELEASE): RELEASING,
    (ACTIVE, E_RECLAIM): RECLAIMING,
    (ACTIVE, E_LENDER_DEAD): FAILED,
    (ACTIVE, E_FAILED): FAILED,
    # A client that releases while the lender reclaims just ends sooner.
    (RECLAIMING, E_RELEASE): RELEASING,
    (RECLAIMING, E_DETACHED): RELEASING,
    (RECLAIMING, E_RECLAIM): RECLAIMING,
    (RECLAIMING, E_LENDER_DEAD): FAILED,
    (RECLAIMING, E_FAILED): FAILED,
    # The lender gave up waiting for the client (reclaim_timeout) and
    # deleted the slab: nothing is lent any more.
    (RECLAIMING, E_FREED): RELEASED,
    (RELEASING, E_RELEASE): RELEASING,
    (RELEASING, E_FREED): RELEASED,
    (RELEASING, E_LENDER_DEAD): FAILED,
    (RELEASING, E_FAILED): FAILED,
}


class IllegalTransition(ValueError):
    """An event that the allocation's state does not allow."""

    def __init__(self, state, event):
        super().__init__('event %r is not allowed in state %r'
                         % (event, state))
        self.state = state
        self.event = event


def next_state(state, event):
    """The state after ``event``; IllegalTransition if not allowed."""
    try:
        return TRANSITIONS[(state, event)]
    except KeyError:
        raise IllegalTransition(state, event) from None


# -- validation of what agents send ----------------------------------------

# No host has an exbibyte of RAM: 2^50 KiB. Anything above is a bug or an
# attack, and would overflow the 64-bit sums of the controller's books.
MAX_KB = 1 << 50


def size_problem(name, value, limit_kb=None, allow_zero=True):
    """Why ``value`` KiB is not a possible size, or None.

    ``limit_kb`` is the physical bound that applies (the host's RAM);
    :data:`MAX_KB` always applies.
    """
    if not isinstance(value, int) or isinstance(value, bool):
        return '%s is not an integer: %r' % (name, value)
    if value < 0 or (value == 0 and not allow_zero):
        return '%s must be %s, not %d' % (
            name, 'positive' if not allow_zero else 'non-negative', value)
    if value > MAX_KB:
        return '%s of %d KiB is beyond any physical memory (2^50 KiB)' % (
            name, value)
    if limit_kb is not None and value > limit_kb:
        return '%s of %d KiB exceeds the host\'s %d KiB of RAM' % (
            name, value, limit_kb)
    return None


def timestamp_problem(timestamp, now, max_skew):
    """Why a message time is not acceptable on the controller's clock.

    Only time ahead of the controller is refused: a message may be late
    (a backlog flushed after an outage), but one from the future would win
    every "newest wins" comparison until the clock catches up.
    """
    if timestamp != timestamp:          # NaN
        return 'timestamp is not a number'
    if timestamp > now + max_skew:
        return ('timestamp is %.1f s ahead of the controller\'s clock '
                '(tolerated: %.1f s)' % (timestamp - now, max_skew))
    return None


def report_problem(report, now, max_skew):
    """Why a HostReport must not be stored, or None."""
    problem = timestamp_problem(report.timestamp, now, max_skew)
    if problem:
        return problem
    total = report.memory_total_kb
    problem = size_problem('memory_total_kb', total)
    if problem:
        return problem
    for name in ('memory_free_kb', 'reservoir_kb'):
        problem = size_problem(name, getattr(report, name), total)
        if problem:
            return problem
    for vm in report.vms:
        problem = timestamp_problem(vm.timestamp, now, max_skew)
        for name in ('booked_kb', 'balloon_kb'):
            problem = problem or size_problem(
                'VM %s %s' % (vm.uuid, name), getattr(vm, name))
        if problem:
            return problem
    return None


def party_problem(sender, alloc, parties):
    """Why ``sender`` may not act on ``alloc``, or None.

    ``parties`` names who may: any of 'client', 'server'.
    """
    allowed = {getattr(alloc, p + '_host') for p in parties}
    if sender is None:
        return ('the sender did not say which host it is (agents before '
                'controller RPC 1.3)')
    if sender not in allowed:
        return 'host %s is not the %s of allocation %s' % (
            sender, ' or '.join(parties), alloc.allocation_id)
    return None


# -- lender liveness and reconciliation -------------------------------------

def is_up(last_heard, now, down_after):
    """A host is up when the controller heard from it (its own clock:
    the receive time, never the agent's timestamp) within down_after s."""
    return last_heard is not None and now - last_heard <= down_after


def reconcile(allocs, hosts, now, down_after, grace):
    """What makes the allocations agree with what the hosts say.

    ``allocs``: every allocation the controller knows that is still open
    (``allocation_id``, ``state``, ``client_host``, ``server_host``,
    ``updated_at``: the controller's time of its last transition).
    ``hosts``: {name: :class:`HostView`}.

    Returns ``(events, orphans)``. ``events`` are
    ``(allocation_id, event, reason)``:

    - the lender is down: ``lender_dead`` (closed as failed);
    - ``requested`` for longer than ``grace``: the LMC_alloc never came
      back (a controller restarted in the middle): ``failed``;
    - ``granted``/``active``: the client is down, or up and has not
      listed it ``grace`` s after the last transition: ``release`` (an
      allocation nobody uses); else the lender no longer lists it
      ``grace`` s after the last transition (its memstore restarted, or
      it deleted the slab on its own): ``failed``, and the client is
      told; else listed by the client: ``in_use`` (once);
    - ``reclaiming`` and the client no longer lists it, or is down:
      ``detached``; else the lender no longer lists it (it deleted the
      slab after its reclaim timeout): ``freed`` (a client still listing
      it is then an orphan, told to let go);
    - ``releasing`` and the lender no longer lists it: ``freed``.

    ``orphans`` are ``(host, role, allocation_id)``: a slab a lender
    exports (role ``server``) or a device a client uses (role ``client``)
    for an allocation that is not open here. The lender must free it, the
    client stop using it. Hosts whose agents do not list their allocations
    (None) are never judged on what they do not say, nor is an allocation
    on lists received before its last transition
    (:meth:`HostView.lists_since`).
    """
    events = []
    open_ids = {a.allocation_id for a in allocs}
    for a in allocs:
        lender = hosts.get(a.server_host) or HostView()
        client = hosts.get(a.client_host) or HostView()
        lender_up = is_up(lender.last_heard, now, down_after)
        client_up = is_up(client.last_heard, now, down_after)
        waited = now - a.updated_at >= grace
        aid = a.allocation_id
        if not lender_up:
            events.append((aid, E_LENDER_DEAD,
                           'lender %s is down' % a.server_host))
            continue
        if a.state == REQUESTED:
            if waited:
                events.append((aid, E_FAILED, 'LMC_alloc to %s never '
                               'answered' % a.server_host))
            continue
        known = (client.attachments is not None and
                 client.lists_since(a.updated_at))
        uses = known and aid in client.attachments
        lender_lost = (lender.exports is not None and
                       lender.lists_since(a.updated_at) and
                       aid not in lender.exports)
        if a.state in (GRANTED, ACTIVE):
            if not client_up:
                events.append((aid, E_RELEASE,
                               'client %s is down' % a.client_host))
            elif known and not uses and waited:
                events.append((aid, E_RELEASE, 'client %s does not use it'
                               % a.client_host))
            elif lender_lost and waited:
                # its memstore restarted, or it deleted the slab after a
                # reclaim nobody answered: nothing is lent any more
                events.append((aid, E_FAILED, 'lender %s no longer holds '
                               'it' % a.server_host))
            elif uses and a.state == GRANTED:
                events.append((aid, E_IN_USE, 'client %s uses it'
                               % a.client_host))
        elif a.state == RECLAIMING:
            if not client_up or (known and not uses):
                events.append((aid, E_DETACHED, 'client %s no longer uses '
                               'it' % a.client_host))
            elif lender_lost:
                events.append((aid, E_FREED, 'lender %s deleted it before '
                               'the client let go (reclaim timeout)'
                               % a.server_host))
        elif a.state == RELEASING:
            if lender_lost:
                events.append((aid, E_FREED, 'lender %s no longer holds it'
                               % a.server_host))
    orphans = []
    for name in sorted(hosts):
        view = hosts[name]
        if not is_up(view.last_heard, now, down_after):
            continue
        for role, ids in (('server', view.exports),
                          ('client', view.attachments)):
            for aid in sorted(set(ids or ()) - open_ids):
                orphans.append((name, role, aid))
    return events, orphans


class HostView:
    """What the controller knows of one host for reconciliation.

    ``listed_at`` is when (controller clock) the controller received the
    report its ``exports`` and ``attachments`` come from, in this run of
    the controller (None: none yet; default: ``last_heard``). Lists older
    than an allocation's last transition do not judge it: after a
    controller restart the stored lists predate what happened just before
    the crash.
    """

    def __init__(self, last_heard=None, exports=None, attachments=None,
                 listed_at=-1.0):
        self.last_heard = last_heard
        self.exports = exports
        self.attachments = attachments
        self.listed_at = last_heard if listed_at == -1.0 else listed_at

    def lists_since(self, t):
        """True when this host's lists were received at or after ``t``."""
        return self.listed_at is not None and self.listed_at >= t


# -- credentials --------------------------------------------------------------

_HEX64 = re.compile(r'^[0-9a-f]{64}$')


def psk_identity(allocation_id):
    """The TLS-PSK identity of an allocation (not secret)."""
    return 'memmut-alloc-%s' % allocation_id


def credentials_problem(identity, key, allocation_id):
    """Why a (psk_identity, psk_key) pair is not well formed, or None."""
    if identity != psk_identity(allocation_id):
        return 'PSK identity does not name allocation %s' % allocation_id
    if not isinstance(key, str) or not _HEX64.match(key):
        return 'PSK key is not 32 bytes in lower-case hex'
    return None
