"""``[api]``: memmut-api, the REST API (``memmut.wsgi.api:application``).

keystonemiddleware's ``[keystone_authtoken]``, oslo.policy's
``[oslo_policy]`` and oslo.middleware's ``[cors]`` options are those
libraries' own; the sample file lists them through the generator's
namespaces (``etc/memmut/memmut-config-generator.conf``).
"""

from oslo_config import cfg

group = cfg.OptGroup('api', title='REST API (memmut-api)')

opts = [
    cfg.StrOpt('auth_strategy',
               default='keystone',
               choices=[('keystone', 'validate tokens with keystonemiddleware '
                                     'auth_token ([keystone_authtoken])'),
                        ('noauth', 'trust the X-Roles / X-Project-Id / '
                                   'X-User-Id headers as they come: tests '
                                   'and the embedded mode only, never '
                                   'behind a public endpoint')],
               help='How memmut-api authenticates requests.'),
    cfg.FloatOpt('round_start_timeout',
                 default=30.0,
                 min=1.0,
                 help='Seconds memmut-api waits for memmut-controller to '
                      'record a consolidation round it was asked to start '
                      '(POST /rounds); the request fails with 503 after '
                      'that.'),
]


def list_opts():
    return {group: opts}
