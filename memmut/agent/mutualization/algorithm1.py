"""Local memory mutualization: Algorithm 1 of seed 004 ch.3.

Each VM has Mem_init (its initial allocation), Mem_act (its current
allocation) and a WSS (here Badis' WSS^max_avg; plus headroom, the
*demand*). Server VMs gave memory to the pool (Mem_act < Mem_init); Client
VMs hold more than they started with (Mem_act > Mem_init). Every round:

1. every VM is brought down to its demand; the surplus goes to the pool;
2. every VM whose WSS grew is given back up to min(WSS, Mem_init):
   from the pool first, then by reclaiming from Clients, down to their
   Mem_init at most (the guarantee);
3. the memory beyond Mem_init -- the pool plus what Clients borrowed,
   ``CLIENT_MEM`` in the seed -- is shared by a *policy* among the VMs whose
   WSS exceeds their Mem_init, each up to its WSS;
4. (memmut's) what is left is shared by the policy as headroom, each VM up
   to its demand.

:func:`distribute` computes the end state of those phases directly
and returns it as a :class:`Distribution`: new allocations, the pool after,
and the
ordered balloon moves (every reclaim before any grant, so applying them in
order never needs memory that is not yet in the pool).

Choices where the seed's pseudo-code is ambiguous or garbled (see
doc/source/mutualization.rst):

* Roles follow the seed's prose (Server: Mem_act < Mem_init; Client:
  Mem_act > Mem_init); the OCR'd pseudo-code line "if Mem_act > Mem_init
  then VM = Server" contradicts it and is read as a typo.
* Phase 3 redistributes CLIENT_MEM = pool + memory borrowed by Clients
  among *all* VMs wanting more than Mem_init, every round (GROW is "Mem_act
  <= WSS", so Clients already at their WSS take part). Borrowed memory is
  therefore not first-come: under a shortage the policy re-divides it.
  Tables 3.1/3.2 show exactly such per-minute divisions.
* ``equal`` is max-min fair (water-filling): equal shares, a VM needing
  less than its share takes only its need and the rest is shared again.
  ``proportional`` splits in proportion to what each VM is missing (demand
  minus what it already has in that phase); this reproduces the uneven
  splits of Table 3.2. The same policy splits reclaims from Clients, which
  falls out of phase 3 re-dividing what Clients hold.
* Headroom comes last. The seed sizes VMs by their WSS alone; memmut adds
  headroom (``[badis] headroom_kb`` / ``headroom_fraction``). The three
  phases run over the WSS (plus its first ``guaranteed_headroom_kb``: a
  guest's free-page watermarks) first, and what is left after them is
  shared by the policy as headroom, up to each VM's demand. So a VM's headroom
  never takes precedence over another VM's working set, and the guarantee
  is min(WSS, Mem_init): a VM below its Mem_init may give up its headroom
  to a VM that lacks working-set memory. Without a shortage every VM gets
  its whole demand, as before.
* If the budget cannot give every VM min(WSS, Mem_init) (only possible
  when the sum of Mem_init exceeds the budget, e.g. after the host reserve
  grew), what is above the VMs' floors is split by the policy and the plan
  says ``guarantee_met = False``.
* Demands are clamped to [floor, booked]; ``min_change_kb`` keeps a VM's
  demand at its allocation when they differ by less, and a VM where it is
  when the headroom shares would move it by less within its headroom
  (noise suppression; the pool may then keep less than ``min_change_kb``
  per VM while some VM lacks part of its headroom; 0 in most invariant
  tests).
* Whole pages. A balloon moves whole 4 KiB pages, so the plan does too:
  every VM's new allocation is its Mem_act plus or minus whole pages
  (``page_kb``), and every split hands out whole pages, the pages left by
  the rounding going one at a time, deterministically (largest fractional
  part, then UUID). Sizes are rounded onto each VM's grid of pages (Mem_act
  + k pages) on the side that keeps the rules: demand, WSS and floor up (a
  VM short of one KiB is short of a page), booked and Mem_init down (never
  above booked; the guarantee never exceeds Mem_init). Only whole pages of
  the pool are handed out; its sub-page remainder stays in it. So every
  reclaim and grant can be carried out exactly by the balloon, and the
  books balance to the KiB. (Before, plans were in KiB: reclaims of 3 KiB
  and 1 KiB funding a 4 KiB grant could never be carried out, and the
  grant stayed pending for good.)

Policies are plugins: classes registered under the stevedore namespace
``memmut.mutualization.policies`` (``equal``, ``proportional``).
"""

import abc
import dataclasses

from memmut.agent.wss import badis
from memmut import plugins
from memmut import sizing


PAGE_KB = 4                 # the balloon's unit: one guest page

ROLE_SERVER = 'server'
ROLE_CLIENT = 'client'
ROLE_NEUTRAL = 'neutral'

MOVE_RECLAIM = 'reclaim'
MOVE_GRANT = 'grant'


class PolicyError(Exception):
    """A policy returned a split that breaks its contract."""


@dataclasses.dataclass(frozen=True)
class VMDemand:
    """One VM as Algorithm 1 sees it (all sizes KiB)."""
    uuid: str
    init_kb: int            # Mem_init
    act_kb: int             # Mem_act, the current allocation
    wss_kb: int             # WSS^max_avg (headroom added by distribute())
    booked_kb: int          # never allocate above this
    floor_kb: int = 0       # never allocate below this (<= init_kb)

    def __post_init__(self):
        for name in ('init_kb', 'act_kb', 'wss_kb', 'floor_kb'):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 0:
                raise ValueError('VM %s: %s must be a non-negative integer, '
                                 'got %r' % (self.uuid, name, value))
        if self.booked_kb <= 0:
            raise ValueError('VM %s: booked_kb must be positive'
                             % self.uuid)
        if self.init_kb > self.booked_kb or self.act_kb > self.booked_kb:
            raise ValueError('VM %s: Mem_init %d and Mem_act %d KiB must not '
                             'exceed booked %d KiB' % (
                                 self.uuid, self.init_kb, self.act_kb,
                                 self.booked_kb))


@dataclasses.dataclass(frozen=True)
class Request:
    """One VM's request in a split: up to ``want`` pages of the amount.

    ``want`` counts whole pages (the unit a split hands out); the other
    sizes are KiB, for policies that weigh by them: ``demand_kb`` is what
    the VM aims at in this phase, ``act_kb`` its Mem_act, ``init_kb`` its
    Mem_init."""
    uuid: str
    want: int
    demand_kb: int
    act_kb: int
    init_kb: int


class Policy(abc.ABC):
    """How memory is split when there is not enough for every request.

    ``split(amount, requests)`` splits ``amount`` whole pages: it returns
    {uuid: share} in pages, integers with every 0 <= share <= want and the
    shares summing to min(amount, sum of wants).
    """

    name = None

    @abc.abstractmethod
    def split(self, amount, requests):
        """Split ``amount`` pages among ``requests``."""


def _all_wants(requests):
    return {r.uuid: r.want for r in requests}


class EqualPolicy(Policy):
    """Equal shares, max-min fair: nobody gets more than it wants."""

    name = 'equal'

    def split(self, amount, requests):
        shares = {r.uuid: 0 for r in requests}
        wanting = sorted((r for r in requests if r.want > 0),
                         key=lambda r: (r.want, r.uuid))
        if amount >= sum(r.want for r in wanting):
            return _all_wants(requests)
        remaining = amount
        while wanting:
            fair = remaining // len(wanting)
            if wanting[0].want > fair:
                break
            r = wanting.pop(0)
            shares[r.uuid] = r.want
            remaining -= r.want
        if wanting:
            fair, extra = divmod(remaining, len(wanting))
            for i, r in enumerate(sorted(wanting, key=lambda r: r.uuid)):
                shares[r.uuid] = fair + (1 if i < extra else 0)
        return shares


class ProportionalPolicy(Policy):
    """Shares in proportion to what each VM is missing."""

    name = 'proportional'

    def split(self, amount, requests):
        total = sum(r.want for r in requests)
        if amount >= total:
            return _all_wants(requests)
        shares = {}
        remainders = []
        for r in requests:
            q, rem = divmod(amount * r.want, total)
            shares[r.uuid] = q
            remainders.append((-rem, r.uuid))
        left = amount - sum(shares.values())
        for _, uuid in sorted(remainders)[:left]:
            shares[uuid] += 1
        return shares


def load_policy(name):
    """The policy registered as ``name`` in ``memmut.mutualization.policies``.
    """
    return plugins.load(plugins.MUTUALIZATION_POLICIES, name)()


def _split(policy, amount, requests):
    """Call the policy (``amount`` and wants in pages) and hold it to its
    contract."""
    requests = [r for r in requests if r.want > 0]
    if amount <= 0 or not requests:
        return {}
    shares = policy.split(amount, requests)
    expected = min(amount, sum(r.want for r in requests))
    for r in requests:
        share = shares.get(r.uuid, 0)
        if not isinstance(share, int) or not 0 <= share <= r.want:
            raise PolicyError('policy %s gave VM %s %r pages for a request '
                              'of %d pages' % (policy.name, r.uuid, share,
                                               r.want))
    if sum(shares.get(r.uuid, 0) for r in requests) != expected:
        raise PolicyError('policy %s split %d pages into %d pages'
                          % (policy.name, expected, sum(shares.values())))
    return shares


def _split_kb(policy, amount_kb, vms, target, have, page_kb):
    """Split the whole pages of ``amount_kb`` among ``vms``, each wanting
    ``target[u] - have[u]`` KiB (whole pages: both are on the VM's grid).
    Returns {uuid: share in KiB}, whole pages."""
    shares = _split(policy, amount_kb // page_kb, [
        Request(vm.uuid, (target[vm.uuid] - have[vm.uuid]) // page_kb,
                target[vm.uuid], vm.act_kb, vm.init_kb) for vm in vms])
    return {u: pages * page_kb for u, pages in shares.items()}


@dataclasses.dataclass(frozen=True)
class BalloonMove:
    """One balloon change: ``reclaim`` (inflate) or ``grant`` (deflate)."""
    uuid: str
    kind: str
    amount_kb: int
    from_kb: int
    to_kb: int
    reason: str


@dataclasses.dataclass(frozen=True)
class Distribution:
    """The outcome of one round of Algorithm 1."""
    policy: str
    allocations: dict           # uuid -> new Mem_act (KiB)
    moves: tuple                # BalloonMove, every reclaim before any grant
    pool_before_kb: int
    pool_after_kb: int
    demands: dict               # uuid -> demand (WSS + headroom, clamped),
    #                             rounded up to the VM's page grid
    needs: dict                 # uuid -> WSS alone (the same, <= demand)
    floors: dict                # uuid -> floor kept, on the page grid
    roles: dict                 # uuid -> server / client / neutral
    unmet_kb: dict              # uuid -> demand not met (only if > 0)
    guarantee_met: bool         # every VM got min(WSS, Mem_init)

    @property
    def budget_kb(self):
        return sum(self.allocations.values()) + self.pool_after_kb

    @property
    def unmet_total_kb(self):
        return sum(self.unmet_kb.values())


_mib = badis.fmt_kb


def _role(alloc, init):
    if alloc < init:
        return ROLE_SERVER
    if alloc > init:
        return ROLE_CLIENT
    return ROLE_NEUTRAL


def _algorithm1(vms, budget, want, floor, init, policy, page_kb):
    """Phases 1-3 over ``want`` (uuid -> size): everyone at
    min(want, Mem_init) -- the guarantee -- then the rest, the pool plus
    Clients' borrowing, shared beyond Mem_init by the policy. Every size is
    on its VM's page grid. Returns the allocations and whether the
    guarantee was met."""
    uuids = [vm.uuid for vm in vms]
    base_want = {u: max(floor[u], min(want[u], init[u])) for u in uuids}
    if sum(base_want.values()) <= budget:
        base = dict(base_want)
        guarantee_met = True
    else:
        above_floors = budget - sum(floor.values())
        if above_floors < 0:
            raise ValueError('the VMs\' floors (%d KiB) exceed the budget '
                             '(%d KiB)' % (sum(floor.values()), budget))
        shares = _split_kb(policy, above_floors, vms, base_want, floor,
                           page_kb)
        base = {u: floor[u] + shares.get(u, 0) for u in uuids}
        guarantee_met = False
    extra = _split_kb(policy, budget - sum(base.values()), vms, want, base,
                      page_kb)
    return {u: base[u] + extra.get(u, 0) for u in uuids}, guarantee_met


def _headroom_deadband(vms, alloc, need, pool_kb, min_change_kb):
    """Leave a VM where it is when the plan would move it by less than
    ``min_change_kb`` within its headroom (above its WSS at both ends):
    the headroom shares shift a little whenever any VM's WSS does, and
    that is no reason to move balloons. Grants first (their memory stays in
    the pool), then reclaims while the pool covers them (the VM keeps what
    would have been taken). Working-set moves are never held back. Returns
    the pool after."""
    by_uuid = sorted(vms, key=lambda vm: vm.uuid)
    for vm in by_uuid:
        u = vm.uuid
        if (vm.act_kb < alloc[u] < vm.act_kb + min_change_kb and
                vm.act_kb >= need[u]):
            pool_kb += alloc[u] - vm.act_kb
            alloc[u] = vm.act_kb
    for vm in by_uuid:
        u = vm.uuid
        diff = vm.act_kb - alloc[u]
        if 0 < diff < min_change_kb and alloc[u] >= need[u] and (
                diff <= pool_kb):
            pool_kb -= diff
            alloc[u] = vm.act_kb
    return pool_kb


def _fit_floors(floor, vms, spendable, page_kb):
    """Take whole pages off the largest floors (then by UUID) until they
    fit ``spendable``. Rounded down, the floors fit unless balloons off
    the page grid keep sub-page remainders (a VM cannot go below Mem_act
    mod page): then a floor may give up to those remainders more."""
    residues = sum(vm.act_kb % page_kb for vm in vms)
    excess = sum(floor.values()) - spendable
    if excess > residues:
        return          # floors over the budget: _algorithm1 says so
    for vm in sorted(vms, key=lambda v: (-floor[v.uuid], v.uuid)):
        if excess <= 0:
            return
        room = (floor[vm.uuid] - vm.act_kb % page_kb) // page_kb
        pages = min(-(-excess // page_kb), room)
        floor[vm.uuid] -= pages * page_kb
        excess -= pages * page_kb


def _grid(vm, page_kb):
    """Rounding onto the VM's page grid (Mem_act + k pages): (up, down)."""
    def up(kb):
        return vm.act_kb + -(-(kb - vm.act_kb) // page_kb) * page_kb

    def down(kb):
        # never below the grid's lowest point that is not negative: a
        # Mem_init of 1 KiB under a Mem_act of 414 rounds to 2, not -2
        # (hypothesis found the plan reclaiming 416 KiB from 414)
        return max(vm.act_kb % page_kb,
                   vm.act_kb + (kb - vm.act_kb) // page_kb * page_kb)
    return up, down


def distribute(vms, pool_kb, policy='equal', headroom_kb=0,
               headroom_fraction=0.0, min_change_kb=0,
               guaranteed_headroom_kb=0, page_kb=PAGE_KB):
    """Run Algorithm 1 once over the VMs of a host.

    ``vms``: :class:`VMDemand` for every VM taking part; ``pool_kb``: the
    free pool (:attr:`~.books.Books.pool_kb`); ``policy``: a
    :class:`Policy` or the name of one. ``headroom_kb`` /
    ``headroom_fraction`` are added to each WSS (as in
    :func:`memmut.sizing.headroom`) and served only after every VM's
    WSS (see the module's notes); pass 0 when the WSS already includes
    it. The first ``guaranteed_headroom_kb`` of each VM's headroom is
    served with its WSS (a guest starts to swap a few MiB above its
    working set, at its free-page watermarks). The budget, sum of Mem_act
    + pool, is conserved. Every move is a whole number of ``page_kb``
    pages (see the module's notes); the demands and needs of the result
    are rounded onto the same page grid.
    """
    if isinstance(policy, str):
        policy = load_policy(policy)
    if not isinstance(pool_kb, int) or pool_kb < 0:
        raise ValueError('pool_kb must be a non-negative integer, got %r'
                         % (pool_kb,))
    if not isinstance(page_kb, int) or page_kb <= 0:
        raise ValueError('page_kb must be a positive integer, got %r'
                         % (page_kb,))
    vms = list(vms)
    uuids = [vm.uuid for vm in vms]
    if len(set(uuids)) != len(uuids):
        raise ValueError('duplicate VM in the input')
    budget = sum(vm.act_kb for vm in vms) + pool_kb
    # Only the pool's whole pages can go to a balloon.
    spendable = budget - pool_kb % page_kb

    # Onto each VM's page grid. The floor rounds up (never below it), but
    # down if the budget cannot pay the floors in whole pages (a VM
    # below an odd floor, a budget tight to the KiB): the KiB floors fit
    # the budget, so their rounded-down pages do, but for the sub-page
    # remainders of balloons off the grid (_fit_floors). Booked and Mem_init
    # round down (never above them), demand and need up (a VM short of a
    # KiB is short of a page).
    grids = {vm.uuid: _grid(vm, page_kb) for vm in vms}
    floor = {vm.uuid: min(grids[vm.uuid][0](min(vm.floor_kb, vm.init_kb)),
                          grids[vm.uuid][1](vm.booked_kb)) for vm in vms}
    if sum(floor.values()) > spendable:
        floor = {vm.uuid: grids[vm.uuid][1](min(vm.floor_kb, vm.init_kb))
                 for vm in vms}
        _fit_floors(floor, vms, spendable, page_kb)
    demand, need, init = {}, {}, {}
    for vm in vms:
        up, down = grids[vm.uuid]
        f_kb = min(vm.floor_kb, vm.init_kb)
        d = vm.wss_kb + sizing.headroom(vm.wss_kb, headroom_kb,
                                        headroom_fraction)
        d = min(vm.booked_kb, max(f_kb, d))
        if min_change_kb and abs(d - vm.act_kb) < min_change_kb and (
                f_kb <= vm.act_kb):
            d = vm.act_kb
        f = floor[vm.uuid]
        d = min(down(vm.booked_kb), max(f, up(d)))
        demand[vm.uuid] = d
        need[vm.uuid] = min(d, max(f, up(vm.wss_kb +
                                         guaranteed_headroom_kb)))
        init[vm.uuid] = down(vm.init_kb)

    # First pass, the working sets (Algorithm 1 over the needs).
    alloc, guarantee_met = _algorithm1(vms, spendable, need, floor, init,
                                       policy, page_kb)
    # Second pass, headroom: what is left, shared by the policy up to each
    # VM's demand. A VM's headroom never comes before another VM's working
    # set (the ch.3 benchmark: a VM 6 MiB short of its working set swapped
    # 1.1 GiB while two neighbours below their Mem_init kept 24 MiB of
    # headroom each).
    headroom = _split_kb(policy, spendable - sum(alloc.values()), vms,
                         demand, alloc, page_kb)
    for u, share in headroom.items():
        alloc[u] += share
    pool_after = budget - sum(alloc.values())
    if min_change_kb:
        pool_after = _headroom_deadband(vms, alloc, need, pool_after,
                                        min_change_kb)

    reclaims, grants = [], []
    for vm in vms:
        new, old = alloc[vm.uuid], vm.act_kb
        d = demand[vm.uuid]
        if new < old:
            if new >= d:
                why = 'unneeded: demand %s below allocation' % _mib(d)
            elif not guarantee_met and new < min(need[vm.uuid],
                                                 init[vm.uuid]):
                why = ('budget below the sum of min(WSS, Mem_init): '
                       '%s share, demand %s' % (policy.name, _mib(d)))
            elif new >= need[vm.uuid] and new < init[vm.uuid]:
                why = ('headroom given up for other VMs\' working sets '
                       '(%s policy): WSS %s, demand %s' % (
                           policy.name, _mib(need[vm.uuid]), _mib(d)))
            else:
                why = ('borrowed memory re-divided (%s policy): demand %s, '
                       'unmet %s' % (policy.name, _mib(d), _mib(d - new)))
            reclaims.append(BalloonMove(vm.uuid, MOVE_RECLAIM, old - new, old,
                                        new,
                                        'reclaim %s -> %s: %s' % (
                                            _mib(old), _mib(new), why)))
        elif new > old:
            if new <= vm.init_kb:
                why = 'back toward Mem_init %s (guarantee), demand %s' % (
                    _mib(vm.init_kb), _mib(d))
            else:
                why = 'beyond Mem_init %s (%s policy), demand %s' % (
                    _mib(vm.init_kb), policy.name, _mib(d))
            if new < d:
                why += ', unmet %s' % _mib(d - new)
            grants.append(BalloonMove(vm.uuid, MOVE_GRANT, new - old, old, new,
                                      'grant %s -> %s: %s' % (
                                          _mib(old), _mib(new), why)))
    mem_init = {vm.uuid: vm.init_kb for vm in vms}
    reclaims.sort(key=lambda m: (-m.amount_kb, m.uuid))
    grants.sort(key=lambda m: (m.to_kb > mem_init[m.uuid], m.uuid))

    return Distribution(policy=policy.name,
                        allocations=alloc,
                        moves=tuple(reclaims + grants),
                        pool_before_kb=pool_kb,
                        pool_after_kb=pool_after,
                        demands=demand,
                        needs=need,
                        floors=floor,
                        roles={vm.uuid: _role(alloc[vm.uuid], vm.init_kb)
                               for vm in vms},
                        unmet_kb={u: demand[u] - alloc[u] for u in uuids
                                  if demand[u] > alloc[u]},
                        guarantee_met=guarantee_met)
