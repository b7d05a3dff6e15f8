from oslo_config import cfg

group = cfg.OptGroup('libvirt', title='libvirt hypervisor driver options')

opts = [
    cfg.StrOpt('connection_uri',
               default='qemu:///system',
               help='libvirt URI the agent connects to. A private libvirtd '
                    'is reached with qemu:///system?socket=/path/sock.'),
    cfg.StrOpt('domain_type',
               default='kvm',
               choices=[('kvm', 'hardware virtualization (production)'),
                        ('qemu', 'software emulation (TCG), for machines '
                                 'without usable KVM such as CI')],
               help='Domain type memmut expects and creates. It decides '
                    'which access-sampling back-ends can see guest '
                    'accesses.'),
    cfg.BoolOpt('nova_instances_only',
                default=False,
                help='Adopt only domains that carry nova instance metadata; '
                     'others are ignored. Off, every running domain is '
                     'managed.'),
    cfg.StrOpt('qemu_pid_dir',
               default='/run/libvirt/qemu',
               help='Directory where libvirtd writes <domain>.pid for each '
                    'running QEMU process. When the file is missing the '
                    'agent looks the process up in /proc.'),
]


def list_opts():
    return {group: opts}
