"""memmut-controller: the Global Memory Controller."""

import sys

from oslo_log import log as logging

from memmut.db import api as db_api
from memmut.db import migration
from memmut.globals import service as controller_service
from memmut import rpc
from memmut import service

LOG = logging.getLogger(__name__)

DESCRIPTION = (
    'memmut-controller, the Global Memory Controller: stores the agents\' '
    'reports in the database, runs the global protocol (remote memory '
    'between hosts) and the consolidation rounds (on a schedule with '
    '[consolidation] scheduled_rounds, or when memmut-api asks), which '
    'live-migrate VMs through nova. Run it on the control plane next to '
    'memmut-api; see doc/source/operate.rst.')


def open_database(conf):
    """Open the database, refusing to run on a schema that is not current."""
    url = conf.database.connection
    try:
        current = migration.current(url)
        head = migration.head()
    except db_api.DBError as e:
        service.fail(str(e))
    if current != head:
        service.fail('database schema is at %s, this controller needs %s: '
                     'run "memmut-db-manage upgrade"' % (current, head))
    return db_api.Database(url, debug=conf.database.connection_debug)


def main(argv=None):
    conf = service.prepare(sys.argv[1:] if argv is None else argv,
                           description=DESCRIPTION)
    service.require_real_transport(conf, 'memmut-controller')
    db = open_database(conf)
    controller = controller_service.ControllerService(
        conf, rpc.get_transport(conf), db)
    service.run_until_signalled(controller.start, controller.stop)


if __name__ == '__main__':
    main()
