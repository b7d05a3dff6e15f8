import os

from memmut.virt.libvirt import driver

NOVA_XML = ('<nova:instance xmlns:nova="http://openstack.org/xmlns/libvirt/'
            'nova/1.1"><nova:package version="34.0.0"/>'
            '<nova:name>web-1</nova:name></nova:instance>')


def test_nova_metadata_gives_display_name():
    assert driver.parse_nova_metadata(NOVA_XML) == 'web-1'
    # what libvirt really returns: the namespace stripped
    stripped = '<instance><package version="34"/><name> db </name></instance>'
    assert driver.parse_nova_metadata(stripped) == 'db'
    assert driver.parse_nova_metadata('<instance/>') is None


def test_foreign_or_broken_metadata_is_not_nova():
    assert driver.parse_nova_metadata(None) is None
    assert driver.parse_nova_metadata('<x/>') is None
    assert driver.parse_nova_metadata('<nova:') is None


def test_find_qemu_pid_by_uuid(tmp_path):
    def proc(pid, *args):
        d = tmp_path / str(pid)
        d.mkdir()
        (d / 'cmdline').write_bytes(b'\0'.join(a.encode() for a in args))
    proc(10, '/usr/bin/bash', '-uuid', 'u1')
    proc(11, '/usr/bin/qemu-system-x86_64', '-name', 'x', '-uuid', 'u2')
    proc(12, '/usr/bin/qemu-system-x86_64', '-uuid', 'u1', '-m', '256')
    os.mkdir(tmp_path / 'self')
    assert driver.find_qemu_pid('u1', proc=str(tmp_path)) == 12
    assert driver.find_qemu_pid('u3', proc=str(tmp_path)) is None


class _Error(Exception):
    def get_error_code(self):
        return 0


class _FakeLibvirt:
    """The parts of the libvirt module list_vms() touches."""
    libvirtError = _Error
    VIR_CONNECT_LIST_DOMAINS_ACTIVE = 1
    VIR_DOMAIN_METADATA_ELEMENT = 2
    VIR_ERR_NO_DOMAIN = 42
    VIR_ERR_OPERATION_INVALID = 55
    VIR_ERR_SYSTEM_ERROR = 38
    VIR_ERR_INTERNAL_ERROR = 1
    VIR_ERR_RPC = 39
    VIR_ERR_NO_CONNECT = 5
    VIR_ERR_INVALID_CONN = 6

    @staticmethod
    def registerErrorHandler(handler, ctx):
        pass


class _Dom:
    def __init__(self, uuid, dtype):
        self.uuid, self.dtype, self.xml_reads = uuid, dtype, 0

    def UUIDString(self):
        return self.uuid

    def name(self):
        return 'dom-' + self.uuid

    def metadata(self, kind, ns):
        raise _Error('no metadata')

    def info(self):
        return 1, 393216, 262144, 1, 10

    def memoryStats(self):
        return {'actual': 262144}

    def XMLDesc(self, flags):
        self.xml_reads += 1
        return "<domain type='%s'/>" % self.dtype


class _Conn:
    def __init__(self, doms):
        self.doms = doms

    def listAllDomains(self, flags):
        return list(self.doms)


def test_domain_type_is_reported_at_every_listing(monkeypatch):
    """The sampling back-ends decide from VMInfo.domain_type whenever they
    choose (again): it must not be None after the first listing (it was,
    and smaps then refused a TCG guest listed once before the agent's
    estimation pipeline first saw it)."""
    from tests import common
    monkeypatch.setattr(driver, 'libvirt', _FakeLibvirt)
    conf = common.private_conf(libvirt={'domain_type': 'qemu'})
    drv = driver.LibvirtDriver(conf)
    a, b = _Dom('u1', 'qemu'), _Dom('u2', 'kvm')
    drv._conn = _Conn([a, b])
    for _ in range(3):
        assert {v.uuid: v.domain_type for v in drv.list_vms()} == {
            'u1': 'qemu', 'u2': 'kvm'}
    assert a.xml_reads == b.xml_reads == 1      # read once per domain
    drv._conn = _Conn([a])                      # u2 left: forgotten
    assert [v.domain_type for v in drv.list_vms()] == ['qemu']
    assert set(drv._types) == {'u1'}


class _CodedError(_Error):
    def __init__(self, code, msg):
        super().__init__(msg)
        self.code, self.msg = code, msg

    def get_error_code(self):
        return self.code

    def get_error_message(self):
        return self.msg


class _LockedDom(_Dom):
    """A domain whose statistics libvirt cannot read while a migration
    holds its state change lock."""
    locked = False

    def memoryStats(self):
        if self.locked:
            raise _CodedError(68, 'Timed out during operation: cannot '
                                  'acquire state change lock')
        return super().memoryStats()


class _AliveConn(_Conn):
    alive = True

    def isAlive(self):
        return self.alive

    def close(self):
        self.alive = False


def test_one_unreadable_domain_does_not_fail_the_listing(
        monkeypatch, caplog):
    from tests import common
    monkeypatch.setattr(driver, 'libvirt', _FakeLibvirt)
    drv = driver.LibvirtDriver(common.private_conf(
        libvirt={'domain_type': 'qemu'}))
    a, b = _LockedDom('u1', 'qemu'), _Dom('u2', 'qemu')
    drv._conn = conn = _AliveConn([a, b])
    first = {v.uuid: v for v in drv.list_vms()}
    assert not first['u1'].stale and first['u1'].state == 'running'
    a.locked = True
    caplog.set_level('WARNING')
    for _ in range(3):
        vms = {v.uuid: v for v in drv.list_vms()}
        assert set(vms) == {'u1', 'u2'} and not vms['u2'].stale
        assert vms['u1'].stale and vms['u1'].state == 'unknown'
        assert vms['u1'].balloon_kb == first['u1'].balloon_kb
    assert caplog.text.count('Domain u1 could not be read') == 1
    a.locked = False
    assert not {v.uuid: v for v in drv.list_vms()}['u1'].stale

    # a domain never read before is left out, not invented
    c = _LockedDom('u3', 'qemu')
    c.locked = True
    conn.doms.append(c)
    assert 'u3' not in {v.uuid for v in drv.list_vms()}

    # a dead connection fails the whole listing, to be retried
    conn.alive = False
    import pytest
    from memmut.virt import driver as virt_driver
    with pytest.raises(virt_driver.HypervisorUnavailable):
        drv.list_vms()


def test_a_failed_host_read_keeps_the_connection(monkeypatch):
    from tests import common
    import pytest
    from memmut.virt import driver as virt_driver
    monkeypatch.setattr(driver, 'libvirt', _FakeLibvirt)
    drv = driver.LibvirtDriver(common.private_conf())

    class Busy(_AliveConn):
        def listAllDomains(self, flags):
            raise _CodedError(86, 'guest agent is not responding')
    drv._conn = conn = Busy([])
    with pytest.raises(virt_driver.HostReadFailed):
        drv.list_vms()
    assert conn.alive and drv._conn is conn


def test_the_floor_uses_the_reservation_read_when_the_balloon_settled(
        monkeypatch):
    from tests import common
    monkeypatch.setattr(driver, 'libvirt', _FakeLibvirt)
    _FakeLibvirt.VIR_DOMAIN_AFFECT_LIVE = 1
    drv = driver.LibvirtDriver(common.private_conf(
        libvirt={'domain_type': 'qemu'},
        agent={'balloon_floor_kb': 16 * 1024, 'guest_reserve_kb': 0}))

    class Dom(_Dom):
        stats = {'actual': 393216, 'available': 393216 - 53 * 1024}
        targets = []

        def memoryStats(self):
            return dict(self.stats)

        def maxMemory(self):
            return 393216

        def setMemoryFlags(self, kib, flags):
            self.targets.append(kib)

    d = Dom('u1', 'qemu')

    class Conn(_AliveConn):
        def lookupByUUIDString(self, uuid):
            return d
    drv._conn = Conn([d])
    drv.list_vms()
    drv.list_vms()                      # twice the same: settled
    # the balloon shrinks: QEMU's actual drops, the guest's MemTotal lags
    Dom.stats = {'actual': 300 * 1024, 'available': 393216 - 53 * 1024}
    drv.list_vms()
    assert drv.set_balloon('u1', 1024) == 53 * 1024
    assert d.targets == [53 * 1024]
