"""Fault injection between memmut's libvirt driver and a real libvirtd.

:class:`FaultyConnection` wraps a live ``virConnect``: every method call on
it, or on a domain it hands out, raises an injected ``libvirtError`` with
probability ``p`` (the error code drawn from :data:`CODES`, the ones the
driver can meet) before reaching libvirt; otherwise the real call runs.
Each injection is recorded (time, method, code, domain uuid), and every
balloon target that does reach libvirt (``setMemoryFlags``) is recorded
with its domain, so a caller can check it against the floor.
"""

import random
import threading
import time

import libvirt

# Every error code the driver's paths can see from libvirt, from the
# vanished domain to the dead connection.
CODES = tuple(getattr(libvirt, n) for n in (
    'VIR_ERR_NO_DOMAIN', 'VIR_ERR_OPERATION_INVALID',
    'VIR_ERR_OPERATION_TIMEOUT', 'VIR_ERR_OPERATION_FAILED',
    'VIR_ERR_SYSTEM_ERROR', 'VIR_ERR_INTERNAL_ERROR', 'VIR_ERR_RPC',
    'VIR_ERR_NO_CONNECT', 'VIR_ERR_INVALID_CONN',
    'VIR_ERR_AGENT_UNRESPONSIVE', 'VIR_ERR_OPERATION_UNSUPPORTED',
    'VIR_ERR_NO_SUPPORT', 'VIR_ERR_OPERATION_ABORTED',
    'VIR_ERR_INVALID_ARG', 'VIR_ERR_OPERATION_DENIED',
    'VIR_ERR_NO_DOMAIN_METADATA'))

# Calls that only close or probe the connection are left alone: failing
# them tests nothing of memmut's.
_SPARED = {'close', 'isAlive', 'UUIDString', 'name'}


def injected_error(code, method):
    e = libvirt.libvirtError('injected fault')
    # (code, domain, message, level, str1, str2, str3, int1, int2)
    e.err = (code, 0, 'injected fault %d in %s' % (code, method), 2,
             None, None, None, 0, 0)
    return e


class Injector:
    """The shared dice and records of one campaign."""

    def __init__(self, p, seed, p_by_method=None):
        self.p = p
        # e.g. {'setMemoryFlags': 0.3}: balloon changes are few per poll,
        # so they get a higher rate to be hit often enough
        self.p_by_method = dict(p_by_method or {})
        self.enabled = True
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.faults = []            # (t, method, code, uuid or None)
        self.balloons = []          # (t, uuid, kib) that reached libvirt

    def maybe_fail(self, method, uuid):
        if method in _SPARED or not self.enabled:
            return
        with self.lock:
            if self.rng.random() >= self.p_by_method.get(method, self.p):
                return
            code = self.rng.choice(CODES)
            self.faults.append((time.monotonic(), method, code, uuid))
        raise injected_error(code, method)


class _Proxy:
    def __init__(self, real, injector, uuid=None):
        self._real = real
        self._inj = injector
        self._uuid = uuid

    def __getattr__(self, name):
        attr = getattr(self._real, name)
        if not callable(attr):
            return attr

        def call(*args, **kwargs):
            self._inj.maybe_fail(name, self._uuid)
            if name == 'setMemoryFlags':
                with self._inj.lock:
                    self._inj.balloons.append(
                        (time.monotonic(), self._uuid, int(args[0])))
            return self._wrap(attr(*args, **kwargs))
        return call

    def _wrap(self, value):
        if isinstance(value, libvirt.virDomain):
            return FaultyDomain(value, self._inj)
        if isinstance(value, list) and value and all(
                isinstance(v, libvirt.virDomain) for v in value):
            return [FaultyDomain(v, self._inj) for v in value]
        return value


class FaultyDomain(_Proxy):
    def __init__(self, real, injector):
        super().__init__(real, injector, real.UUIDString())


class FaultyConnection(_Proxy):
    pass
