import os

from memmut.virt import libvirt_driver

NOVA_XML = ('<nova:instance xmlns:nova="http://openstack.org/xmlns/libvirt/'
            'nova/1.1"><nova:package version="34.0.0"/>'
            '<nova:name>web-1</nova:name></nova:instance>')


def test_nova_metadata_gives_display_name():
    assert libvirt_driver.parse_nova_metadata(NOVA_XML) == 'web-1'
    # what libvirt really returns: the namespace stripped
    stripped = '<instance><package version="34"/><name> db </name></instance>'
    assert libvirt_driver.parse_nova_metadata(stripped) == 'db'
    assert libvirt_driver.parse_nova_metadata('<instance/>') is None


def test_foreign_or_broken_metadata_is_not_nova():
    assert libvirt_driver.parse_nova_metadata(None) is None
    assert libvirt_driver.parse_nova_metadata('<x/>') is None
    assert libvirt_driver.parse_nova_metadata('<nova:') is None


def test_find_qemu_pid_by_uuid(tmp_path):
    def proc(pid, *args):
        d = tmp_path / str(pid)
        d.mkdir()
        (d / 'cmdline').write_bytes(b'\0'.join(a.encode() for a in args))
    proc(10, '/usr/bin/bash', '-uuid', 'u1')
    proc(11, '/usr/bin/qemu-system-x86_64', '-name', 'x', '-uuid', 'u2')
    proc(12, '/usr/bin/qemu-system-x86_64', '-uuid', 'u1', '-m', '256')
    os.mkdir(tmp_path / 'self')
    assert libvirt_driver.find_qemu_pid('u1', proc=str(tmp_path)) == 12
    assert libvirt_driver.find_qemu_pid('u3', proc=str(tmp_path)) is None
