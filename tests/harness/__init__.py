"""Real-hypervisor test harness: a private libvirtd, tiny TCG guests that run
the W1-W5 working sets of :mod:`memmut.evaluation.workloads`, and swap disks.

Fixtures (tests/functional/conftest.py imports them):

``libvirtd`` (session)
    ``.uri`` (``qemu:///system?socket=...``), ``.conn`` (shared) /
    ``.open()``, ``.qemu_pid_dir`` (memmut's ``[libvirt] qemu_pid_dir``),
    ``.memmut_options()`` (connection_uri, domain_type, qemu_pid_dir),
    ``.log_dir``.
``guest_image`` (session)
    ``.kernel``, ``.initrd``, ``.memwork`` (the workload binary, runs on the
    host too).
``guest_factory`` (function)
    ``guest_factory(memory_mib=384, current_mib=None, schedule=steps,
    alloc='d', loops=1, period_ms=0, poweroff=False, swap=None|'file'|'nbd'|
    SwapDisk, swap_mib=512, nova=NovaMetadata(...), memfd=False,
    tb_cache_mib=None, stat_period=2, wait_ready=True, pattern=None)``
    (``pattern``: memwork's access pattern, workloads.Pattern or its text)
    returns a started
    :class:`guest.Guest`; also ``.nbd_server(size_mib)``, ``.swap_file()``,
    ``.spec(...)``.  Everything is destroyed when the test ends.

A Guest: ``.dom`` (libvirt domain), ``.uuid``, ``.name``, ``.qemu_pid()``,
``.wait_for(regex, timeout, after=mark)``, ``.mark()``, ``.wait_ready()``,
``.wait_done()``, ``.wait_stat(pred)``, ``.workload_lines()``,
``.guest_stats()``, ``.swap_server`` (nbdkit, ``.requests()``).
"""
