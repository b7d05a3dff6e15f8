"""memmut-api for a WSGI server: ``memmut.wsgi.api:application``.

Importing this module reads the configuration and builds the application
(see :mod:`memmut.api.deploy` for where the files are looked for)::

    uwsgi --http 127.0.0.1:8780 --module memmut.wsgi.api:application \\
          --env OS_MEMMUT_CONFIG_FILES=/etc/memmut/memmut.conf
"""

import threading

from oslo_config import cfg

from memmut.api import deploy
from memmut import service

_lock = threading.Lock()
application = None
with _lock:
    if application is None:
        try:
            application = deploy.init_application()
        except cfg.Error as e:
            service.fail('memmut-api configuration: %s' % e)
