"""Process set-up shared by memmut's commands: config, logging, RPC."""

import os
import signal
import sys
import threading

from oslo_config import cfg
from oslo_log import log as logging

from memmut import conf as memmut_conf
from memmut.conf import validate
from memmut import rpc

LOG = logging.getLogger(__name__)
DOMAIN = 'memmut'


def prepare(argv, conf=None, project=DOMAIN, defaults=None, cli_opts=None,
            description=None):
    """Parse the command line and config files; set up logging and RPC.

    ``defaults`` maps (group, option) -> value for commands whose sensible
    defaults differ from the services' (the embedded demo); ``cli_opts``
    maps a group to already-registered options that the command also takes
    on its command line (``--demo-duration``); ``description`` is what
    ``--help`` says the command does.
    """
    conf = conf or memmut_conf.CONF
    logging.register_options(conf)
    rpc.set_defaults(conf)
    for group, opts in (cli_opts or {}).items():
        conf.register_cli_opts(opts, group=group)
    for (group, name), value in (defaults or {}).items():
        conf.set_default(name, value, group=group)
    set_library_defaults()
    try:
        conf(argv, project=project, description=description)
    except cfg.Error as e:
        # a missing or unreadable config file, a line that is not ini
        config_error([str(e)])
    # Every option read once now: a bad value read first by a worker
    # thread would end that thread while the process runs on.
    problems = validate.problems(conf)
    if problems:
        config_error(problems)
    logging.setup(conf, project)
    for line in validate.warnings(conf):
        LOG.warning('%s', line)
    return conf


def config_error(problems):
    """Exit 2 with one line per configuration problem, no traceback."""
    prog = os.path.basename(sys.argv[0]) or DOMAIN
    for p in problems:
        sys.stderr.write('%s: error: %s\n' % (prog, p))
    sys.exit(2)


def set_library_defaults():
    """memmut's defaults for its libraries' options (oslo.log, messaging).

    Also the ``oslo.config.opts.defaults`` hook, so the generated sample
    shows the defaults the services really use.
    """
    rpc.set_library_defaults()
    # These libraries log every connection and plugin load at INFO.
    logging.set_defaults(default_log_levels=logging.get_default_log_levels()
                         + ['stevedore=WARN', 'amqp=WARN', 'kombu=WARN',
                            'alembic=WARN'])


def run_until_signalled(start, stop, grace=None):
    """Start a service, block until SIGINT/SIGTERM, then stop it.

    Exits the process. ``start`` runs in a thread of its own: it may block
    for as long as the broker or the database is down, and a signal must
    still end the process then. ``stop`` gets ``grace`` seconds
    (``[DEFAULT] graceful_shutdown_timeout``); past them, or at a second
    signal, the process exits without waiting for it.
    """
    grace = memmut_conf.CONF.graceful_shutdown_timeout if grace is None \
        else grace
    done = threading.Event()
    failed = []
    signals = []

    def handler(signum, frame):
        signals.append(signum)
        if len(signals) > 1:
            LOG.warning('Second signal %d: exiting now', signum)
            _exit_now(1)
        LOG.info('Received signal %d, stopping', signum)
        done.set()

    def starter():
        try:
            start()
        except Exception as e:
            LOG.exception('Start failed')
            failed.append(e)
            done.set()

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)
    threading.Thread(target=starter, name='memmut-start',
                     daemon=True).start()
    while not done.wait(1.0):
        pass
    stopper = threading.Thread(target=stop, name='memmut-stop', daemon=True)
    stopper.start()
    stopper.join(grace)
    if stopper.is_alive():
        LOG.warning('Work in flight did not end within %d s '
                    '(graceful_shutdown_timeout); exiting anyway', grace)
        _exit_now(1)
    if failed:
        fail('start failed: %s' % failed[0])
    LOG.info('Stopped')
    sys.exit(0)


def _exit_now(status):
    """Leave at once, past threads that will not end (a connection retry
    loop, a hung libvirt call); log handlers are flushed first."""
    for h in logging.getLogger().logger.handlers:
        try:
            h.flush()
        except Exception:
            pass
    os._exit(status)


def fail(message):
    """Exit with a clear one-line error instead of a traceback."""
    sys.stderr.write('memmut: error: %s\n' % message)
    sys.exit(1)


def require_real_transport(conf, what):
    if rpc.is_embedded(conf):
        fail('%s runs as its own process, but [DEFAULT] transport_url is '
             'the in-process transport (%s), which cannot reach other '
             'processes. Set transport_url, e.g. '
             'rabbit://user:pass@broker:5672/.' % (what, conf.transport_url))
