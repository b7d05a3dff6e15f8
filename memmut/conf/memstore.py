from oslo_config import cfg

group = cfg.OptGroup(
    'memstore', title='memstore swap-disk server options',
    help='memmut-memstore serves each VM\'s swap disk over NBD from host '
         'RAM with a local backing file, and reports its swap traffic '
         '(see doc/source/memstore.rst).')

opts = [
    cfg.BoolOpt('enabled',
                default=False,
                help='Give every VM the agent adopts a swap disk served by '
                     'memmut-memstore (created as an export, attached to '
                     'the domain) and read its swap-traffic monitor. Needs '
                     'the libvirt driver and a running memmut-memstore.'),
    cfg.StrOpt('binary',
               default='memmut-memstore',
               help='The memmut-memstore executable: an absolute path, or '
                    'a name looked up on PATH. When not found, a build in '
                    'the source tree (memstore/target/release/'
                    'memmut-memstore, made by "cargo build --release" in '
                    'memstore/) is used.'),
    cfg.StrOpt('state_dir',
               default='/var/lib/memmut/memstore',
               help='Directory where memmut-memstore keeps each export\'s '
                    'configuration and backing file (every page the guest '
                    'swapped out). Must be on a local file system that '
                    'supports sparse files and hole punching.'),
    cfg.StrOpt('socket_dir',
               default='/run/memmut/memstore',
               help='Directory of memmut-memstore\'s control socket '
                    '(control.sock) and of one NBD socket per export '
                    '(<vm uuid>.sock). QEMU must be able to open it. Unix '
                    'socket paths are limited to 107 bytes.'),
    cfg.IntOpt('host_quota_mb',
               default=1024, min=0,
               help='Host RAM, in MiB, all exports may use together (the '
                    'host\'s free-memory reservoir). Pages over it are '
                    'served from the backing files. The agent sets it on '
                    'memmut-memstore at start-up.'),
    cfg.IntOpt('export_quota_mb',
               default=256, min=0,
               help='RAM quota, in MiB, of a new VM\'s export. It can be '
                    'changed at run time per export.'),
    cfg.IntOpt('swap_size_mb',
               default=1024, min=1,
               help='Size, in MiB, of the swap disk created for each VM.'),
    cfg.StrOpt('disk_target',
               default='vdz',
               help='Target device name of the swap disk in the domain '
                    'definition (a virtio disk). It must not collide with '
                    'the VM\'s other disks; the guest names disks by probe '
                    'order whatever this says.'),
    cfg.IntOpt('reconnect_delay',
               default=10, min=0,
               help='Seconds QEMU\'s NBD client keeps guest I/O waiting '
                    'and retries when memmut-memstore goes away (libvirt '
                    '<reconnect delay=.../>); a restarted memstore then '
                    'serves every page it had acknowledged. 0 disables '
                    'reconnection (I/O errors at once).'),
    cfg.StrOpt('attach_mode',
               default='auto',
               choices=[('auto', 'libvirt when it is 9.2 or newer or the '
                                 'reconnect delay is 0, else '
                                 'qemu-passthrough'),
                        ('libvirt', 'a libvirt <disk> with <reconnect '
                                    'delay/> (libvirt >= 9.2 honours it)'),
                        ('qemu-passthrough',
                         'QEMU -blockdev/-device in <qemu:commandline> and '
                         'QMP hot-plug (i440fx machines; libvirt marks the '
                         'domain tainted)')],
               help='How the swap disk is attached. libvirt older than '
                    '9.2 silently drops <reconnect delay/> from NBD disks, '
                    'and without it a restarted memmut-memstore means '
                    'guest I/O errors.'),
    cfg.BoolOpt('bind_qemu_pid',
                default=True,
                help='Bind each VM\'s export to the pid of the VM\'s QEMU '
                     '(from the hypervisor driver), so that memmut-memstore '
                     'lets no other process but its own user and root open '
                     'that swap disk. The agent re-binds when the QEMU pid '
                     'changes and unbinds while the VM has no QEMU (so that '
                     'the next boot can connect). A driver that knows no '
                     'pid (sim) leaves exports unbound. See "Trust model" '
                     'in doc/source/memstore.rst.'),
    cfg.IntOpt('histogram_bucket_pages',
               default=256, min=1,
               help='Reuse-distance histogram bucket size, in 4 KiB pages, '
                    'of new exports (Geiger\'s published prototype used '
                    '4 MB buckets = 1024 pages).'),
    cfg.FloatOpt('ghost_percentile',
                 default=95.0, min=0.1, max=100.0,
                 help='X of Geiger\'s m_ghost: the extra memory that would '
                      'have turned X % of the swap-ins into hits.'),
    cfg.FloatOpt('call_timeout',
                 default=5.0, min=0.1,
                 help='Seconds to wait for a reply on the control socket.'),
    cfg.StrOpt('remote_listen',
               help='ADDRESS:PORT (IPv6: [ADDRESS]:PORT) where this '
                    'host\'s memmut-memstore serves slabs, the memory it '
                    'lends to other hosts\' VMs (memmut-memstore '
                    '--remote-listen; NBD over TLS 1.3 with a pre-shared '
                    'key per allocation). Use an address of the network '
                    'only compute hosts reach, never 0.0.0.0. Unset: this '
                    'host lends no memory (LMC_alloc is refused).'),
    cfg.FloatOpt('remote_timeout',
                 default=0.2, min=0.001, max=60.0,
                 help='Seconds one request to a slab on another host may '
                      'take (memmut-memstore --remote-timeout, and the '
                      'timeout the agent gives slab_attach). A read that '
                      'misses it is served from the local backing file in '
                      'the same guest request and the slab is detached: '
                      'the guest sees latency, never an error.'),
    cfg.IntOpt('remote_dirty_window',
               default=64, min=0,
               help='MiB of host page cache that the local backing file\'s '
                    'copies of a VM\'s remote-placed pages may hold '
                    '(memmut-memstore --remote-dirty-window; the agent '
                    'gives it to slab_attach for each VM\'s swap disk). '
                    'Every page is written to the backing file before the '
                    'guest\'s write is acknowledged; the copies of pages '
                    'that went to another host are then written back to '
                    'disk and dropped from the page cache in halves of '
                    'this window (sync_file_range, then posix_fadvise '
                    'DONTNEED on clean pages only), so that lending memory '
                    'to a VM does not fill the client host\'s page cache '
                    'with a second copy. A page dropped this way reads '
                    'back from the disk if its slab fails. 0: no bound '
                    '(the kernel writes back and evicts when it likes). '
                    'See "Page cache and durability" in '
                    'doc/source/remote-memory.rst.'),
]


def list_opts():
    return {group: opts}
