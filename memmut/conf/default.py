import socket

from oslo_config import cfg

opts = [
    cfg.StrOpt('host',
               default=socket.gethostname(),
               sample_default='<hostname>',
               help='Name of this node. The agent reports under this name '
                    'and listens for controller calls on it; it must match '
                    'the nova compute host name for consolidation to act on '
                    'the right node.'),
    cfg.StrOpt('state_path',
               default='/var/lib/memmut',
               help='Directory where memmut keeps its state (the embedded '
                    'SQLite database, sockets, backing files).'),
    cfg.StrOpt('agent_topic',
               default='memmut-agent',
               help='RPC topic the agents listen on (one server per host).'),
    cfg.StrOpt('controller_topic',
               default='memmut-controller',
               help='RPC topic the controller listens on.'),
    cfg.IntOpt('graceful_shutdown_timeout',
               default=30,
               min=1,
               help='Seconds a service waits, after SIGTERM or SIGINT, for '
                    'its work in flight (a poll, a balloon step, a round\'s '
                    'current call) to end before it exits anyway. A second '
                    'signal exits at once.'),
]


def list_opts():
    return {'DEFAULT': opts}
