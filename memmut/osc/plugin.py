"""OpenStackClient plugin hooks for memmut (see osc-lib's plugin docs)."""

from osc_lib import exceptions
from osc_lib import utils
from oslo_utils import importutils

DEFAULT_API_VERSION = '1'
API_VERSION_OPTION = 'os_memmut_api_version'
API_NAME = 'memmut'
API_VERSIONS = {'1': 'memmut.osc.client.Client'}


def make_client(instance):
    """The memmut client of an OSC ClientManager ``instance``."""
    version = str(instance._api_version[API_NAME])
    if version not in API_VERSIONS:
        raise exceptions.UnsupportedVersion(
            'memmut API version %s is not supported; use one of %s'
            % (version, ', '.join(sorted(API_VERSIONS))))
    cls = importutils.import_class(API_VERSIONS[version])
    return cls(session=instance.session,
               region_name=instance.region_name,
               interface=instance.interface,
               endpoint_override=_endpoint(instance))


def _endpoint(instance):
    """--os-memmut-endpoint / OS_MEMMUT_ENDPOINT, if given."""
    options = getattr(instance, '_cli_options', None)
    config = getattr(options, 'config', None) or {}
    return (config.get('memmut_endpoint') or
            utils.env('OS_MEMMUT_ENDPOINT') or None)


def build_option_parser(parser):
    parser.add_argument(
        '--os-memmut-api-version', metavar='<memmut-api-version>',
        default=utils.env('OS_MEMMUT_API_VERSION',
                          default=DEFAULT_API_VERSION),
        help='memmut API version, default=%s (Env: OS_MEMMUT_API_VERSION)'
             % DEFAULT_API_VERSION)
    parser.add_argument(
        '--os-memmut-endpoint', metavar='<url>', dest='memmut_endpoint',
        default=utils.env('OS_MEMMUT_ENDPOINT'),
        help='memmut-api URL instead of the catalog\'s (Env: '
             'OS_MEMMUT_ENDPOINT)')
    return parser
