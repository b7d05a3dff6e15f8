"""Message schemas exchanged between the agent (LMC) and controller (GMC).

Every RPC payload is one of these dataclasses, serialized with
``to_primitive()`` into plain JSON-able dicts and checked on the way in with
``from_primitive()``, so a malformed or foreign message is rejected with a
clear :class:`SchemaError` instead of failing deep inside a handler.

Field units are explicit in their names: ``_kb`` is KiB (libvirt's unit),
``_ns`` nanoseconds, ``timestamp`` seconds since the epoch (float).
"""

import dataclasses
import typing


class SchemaError(ValueError):
    """A message does not match its schema."""


_PRIMITIVE = (str, int, float, bool, type(None))


def _checker(cls, name, ftype):
    """A function checking (and converting) the value of field ``name``
    of type ``ftype``; built once per field, not at every value."""
    origin = typing.get_origin(ftype)
    args = typing.get_args(ftype)
    if origin is typing.Union:
        inner = _checker(cls, name,
                         next(a for a in args if a is not type(None)))
        if type(None) not in args:
            return inner
        return lambda value: None if value is None else inner(value)
    if dataclasses.is_dataclass(ftype):
        return ftype.from_primitive
    if origin is list:
        item = _checker(cls, name, args[0])

        def check_list(value):
            if not isinstance(value, (list, tuple)):
                raise SchemaError('%s.%s: expected a list'
                                  % (cls.__name__, name))
            return [item(v) for v in value]
        return check_list
    if origin is dict or ftype is dict:
        def check_mapping(value):
            if not isinstance(value, dict) or not all(
                    isinstance(v, _PRIMITIVE) for v in value.values()):
                raise SchemaError('%s.%s: expected a flat mapping'
                                  % (cls.__name__, name))
            return dict(value)
        return check_mapping

    def check(value):
        if ftype is float and isinstance(value, int) and not isinstance(
                value, bool):
            return float(value)
        if not isinstance(value, ftype) or (
                ftype is int and isinstance(value, bool)):
            raise SchemaError('%s.%s: expected %s, got %r'
                              % (cls.__name__, name, ftype.__name__, value))
        return value
    return check


def _fields(cls):
    """(name, required, checker) of every field of dataclass ``cls``,
    built once per class: looking the types up at every message
    (typing.get_type_hints) was most of the cost of reading a report."""
    fields = _FIELDS.get(cls)
    if fields is None:
        hints = typing.get_type_hints(cls)
        fields = _FIELDS[cls] = tuple(
            (f.name, f.default is dataclasses.MISSING and
             f.default_factory is dataclasses.MISSING,
             _checker(cls, f.name, hints[f.name]))
            for f in dataclasses.fields(cls))
    return fields


_FIELDS = {}


class Message:
    """Mixin: (de)serialization with validation for dataclass messages."""

    def to_primitive(self):
        return dataclasses.asdict(self)

    @classmethod
    def from_primitive(cls, data):
        if isinstance(data, cls):
            return data
        if not isinstance(data, dict):
            raise SchemaError('%s: expected a mapping, got %s'
                              % (cls.__name__, type(data).__name__))
        kwargs = {}
        for name, required, check in _fields(cls):
            if name not in data:
                if required:
                    raise SchemaError('%s: missing field %r'
                                      % (cls.__name__, name))
                continue
            kwargs[name] = check(data[name])
        # Fields this reader does not know are ignored: a newer minor version
        # of the RPC API may add fields without breaking older readers.
        return cls(**kwargs)


# ---------------------------------------------------------------------------
# Agent -> controller: periodic reports


@dataclasses.dataclass
class VMReport(Message):
    """One VM as the agent saw it at one poll."""
    uuid: str
    name: str
    timestamp: float
    state: str
    booked_kb: int
    balloon_kb: int
    # libvirt memoryStats() keys (KiB or counts), exactly as read.
    memory_stats: dict = dataclasses.field(default_factory=dict)
    cpu_time_ns: int = 0
    nova_instance: bool = False
    wss_kb: typing.Optional[int] = None
    wss_estimator: typing.Optional[str] = None
    # WSS^max_avg as the agent's estimator computed it (seed 004 §2.6.3:
    # the maximum over the last ``max_avg_slice_s`` seconds of the moving
    # average of the last ``max_avg_window`` round estimates), and the
    # Badis mode (V, VG, G) of the last round. None from estimators that
    # have no max-average and from agents before RPC 1.1.
    wss_max_avg_kb: typing.Optional[int] = None
    max_avg_window: typing.Optional[int] = None
    max_avg_slice_s: typing.Optional[float] = None
    badis_mode: typing.Optional[str] = None
    # Badis's pinned-page correction (what the agent learned sampling
    # does not see), why it last changed and when (agent clock); None
    # from other estimators and from agents before RPC 1.4.
    pinned_kb: typing.Optional[int] = None
    pinned_note: typing.Optional[str] = None
    pinned_at: typing.Optional[float] = None
    # Badis's shrink floor (0: none), its last change in words and when
    # (agent clock); None from other estimators and agents before RPC 1.6.
    shrink_floor_kb: typing.Optional[int] = None
    shrink_floor_note: typing.Optional[str] = None
    shrink_floor_at: typing.Optional[float] = None
    # Local mutualization (seed 004 ch.3), None/0 when it is off: the VM's
    # role (server: gave memory, client: holds more than Mem_init,
    # neutral), Mem_init, and what it lent to the pool / borrowed beyond
    # Mem_init.
    mut_role: typing.Optional[str] = None
    mem_init_kb: typing.Optional[int] = None
    lent_kb: int = 0
    borrowed_kb: int = 0


@dataclasses.dataclass
class HostReport(Message):
    """Everything one agent poll observed on its host.

    ``seq`` increases by one per report of an agent run (``boot_id``); the
    controller stores each (host, boot_id, seq) once, so resending a report
    after a lost reply is harmless.
    """
    host: str
    boot_id: str
    seq: int
    timestamp: float
    hypervisor: str
    memory_total_kb: int
    memory_free_kb: int
    cpu_count: int
    cpu_util: float
    reservoir_kb: int = 0
    vms: typing.List[VMReport] = dataclasses.field(default_factory=list)
    # Remote allocations (controller RPC 1.3): the ids of the slabs this
    # host lends and of the remote devices its VMs use. None: the agent
    # does not say (older agents); the controller then does not reconcile
    # on this host's word.
    remote_exports: typing.Optional[typing.List[str]] = None
    remote_attachments: typing.Optional[typing.List[str]] = None


# ---------------------------------------------------------------------------
# Global protocol of seed 004 §4.3.1.


@dataclasses.dataclass
class ReservoirInform(Message):
    """GMC_inform: an LMC's free-memory reservoir changed."""
    host: str
    reservoir_kb: int
    timestamp: float


@dataclasses.dataclass
class RemoteAllocRequest(Message):
    """GMC_alloc: a client LMC asks for remote memory for one of its VMs."""
    client_host: str
    vm_uuid: str
    size_kb: int


@dataclasses.dataclass
class RemoteDevice(Message):
    """Where a client reaches remote memory (returned by LMC_alloc)."""
    allocation_id: str
    server_host: str
    uri: str
    size_kb: int
    # TLS-PSK credentials of the slab, issued by the GMC (controller RPC
    # 1.3 / agent RPC 1.1; doc/source/remote-memory.rst). The GMC fills
    # them in the reply to the client; a lender never needs to echo them.
    psk_identity: typing.Optional[str] = None
    psk_key: typing.Optional[str] = None

    def __repr__(self):
        return ('RemoteDevice(allocation_id=%r, server_host=%r, uri=%r, '
                'size_kb=%r, psk_identity=%r, psk_key=%s)' % (
                    self.allocation_id, self.server_host, self.uri,
                    self.size_kb, self.psk_identity,
                    '<hidden>' if self.psk_key else None))


@dataclasses.dataclass
class LmcAllocRequest(Message):
    """LMC_alloc: the GMC asks a server LMC to export memory to a client."""
    allocation_id: str
    client_host: str
    vm_uuid: str
    size_kb: int
    # The credentials the lender's memstore must require (agent RPC 1.1);
    # None from a 1.0 controller, and a lender then refuses.
    psk_identity: typing.Optional[str] = None
    psk_key: typing.Optional[str] = None

    def __repr__(self):
        # Never put the key in a log line.
        return ('LmcAllocRequest(allocation_id=%r, client_host=%r, '
                'vm_uuid=%r, size_kb=%r, psk_identity=%r, psk_key=%s)' % (
                    self.allocation_id, self.client_host, self.vm_uuid,
                    self.size_kb, self.psk_identity,
                    '<hidden>' if self.psk_key else None))


@dataclasses.dataclass
class AllocationRef(Message):
    """GMC_release / LMC_release / LMC_reclaim: names one allocation."""
    allocation_id: str
    reason: str = ''
    # GMC_release only (controller RPC 1.5): the client's memstore found
    # the slab dead (lender or link gone), so the allocation ends as
    # failed, not released. Older controllers ignore it and release.
    failed: bool = False


@dataclasses.dataclass
class ReclaimRequest(Message):
    """GMC_reclaim: a server LMC wants ``size_kb`` of its memory back."""
    server_host: str
    size_kb: int
    # Controller RPC 1.5: the allocations the lender chose to take back
    # (it deletes exactly those after its reclaim timeout, so both sides
    # must mean the same ones). None: the GMC chooses, largest first.
    allocation_ids: typing.Optional[typing.List[str]] = None


@dataclasses.dataclass
class AllocResult(Message):
    """Answer to GMC_alloc/LMC_alloc: a device, or why there is none."""
    granted: bool
    device: typing.Optional[RemoteDevice] = None
    reason: str = ''
