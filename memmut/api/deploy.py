"""Configuration and assembly of memmut-api for a WSGI server
(``memmut.wsgi.api:application`` calls :func:`init_application`).

Configuration files, first found wins:

* ``OS_MEMMUT_CONFIG_FILES``: ``;``-separated list of files;
* ``OS_MEMMUT_CONFIG_DIR``: ``memmut.conf`` in that directory (plus its
  ``memmut.conf.d``, as oslo.config does);
* oslo.config's usual search (``/etc/memmut/memmut.conf``...).

For example::

    uwsgi --http 127.0.0.1:8780 --module memmut.wsgi.api:application \\
          --env OS_MEMMUT_CONFIG_FILES=/etc/memmut/memmut.conf
"""

import os

from oslo_log import log as logging

from memmut.api import app as api_app
from memmut import conf as memmut_conf
from memmut import rpc
from memmut import service

LOG = logging.getLogger(__name__)


def config_files(environ=None):
    environ = os.environ if environ is None else environ
    files = [f.strip() for f in
             environ.get('OS_MEMMUT_CONFIG_FILES', '').split(';')
             if f.strip()]
    if files:
        return files
    directory = environ.get('OS_MEMMUT_CONFIG_DIR', '').strip()
    if directory:
        return [os.path.join(directory, 'memmut.conf')]
    return None


def register_middleware_opts(conf):
    """Options of the oslo.middleware pieces build_app reads itself."""
    from oslo_middleware import cors
    conf.register_opts(cors.CORS_OPTS, 'cors')


def init_application(environ=None, conf=None):
    conf = conf or memmut_conf.CONF
    logging.register_options(conf)
    rpc.set_defaults(conf)
    register_middleware_opts(conf)
    service.set_library_defaults()
    files = config_files(environ)
    kwargs = {'default_config_files': files} if files else {}
    conf([], project=service.DOMAIN, **kwargs)
    logging.setup(conf, service.DOMAIN)
    conf.log_opt_values(LOG, logging.DEBUG)
    return api_app.build_app(conf)
