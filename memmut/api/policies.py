"""memmut-api's policy rules, in code (oslo.policy).

Three personas, as in the other OpenStack services' secure RBAC defaults
(project-scoped tokens; keystone's bootstrap makes ``admin`` imply
``member`` imply ``reader``):

* ``reader`` reads everything memmut knows: hosts, VMs and their working
  sets, consolidation rounds, remote-memory allocations. These are
  infrastructure figures; a cloud that considers host names private
  overrides the ``memmut:reader`` rule with ``role:admin``.
* ``admin`` may also start consolidation rounds (which live-migrate VMs).
* ``service`` (other services' users, keystone's ``service`` role) may do
  what an admin may, for automation.

``oslopolicy-sample-generator --namespace memmut`` writes every rule
(``tox -e genpolicy``: ``etc/memmut/policy.yaml.sample``);
``oslopolicy-policy-generator`` and ``oslopolicy-checker`` work too
(``oslo.policy.policies = memmut`` entry point).
"""

from oslo_policy import policy

READER = 'memmut:reader'
ADMIN_OR_SERVICE = 'memmut:admin_or_service'
SCOPE = ['project']

base = [
    policy.RuleDefault(
        READER, 'role:reader or role:service',
        description='Who may read memmut\'s hosts, VMs, rounds and '
                    'allocations.'),
    policy.RuleDefault(
        ADMIN_OR_SERVICE, 'role:admin or role:service',
        description='Who may change what memmut does (start consolidation '
                    'rounds).'),
]


def _rule(name, check, description, method, path):
    return policy.DocumentedRuleDefault(
        name=name, check_str='rule:%s' % check, description=description,
        operations=[{'method': method, 'path': path}], scope_types=SCOPE)


HOST_LIST = 'memmut:host:list'
HOST_SHOW = 'memmut:host:show'
VM_LIST = 'memmut:vm:list'
VM_SHOW = 'memmut:vm:show'
VM_HISTORY = 'memmut:vm:history'
ROUND_LIST = 'memmut:round:list'
ROUND_SHOW = 'memmut:round:show'
ROUND_CREATE = 'memmut:round:create'
ALLOCATION_LIST = 'memmut:allocation:list'
ALLOCATION_SHOW = 'memmut:allocation:show'

rules = [
    _rule(HOST_LIST, READER, 'List compute hosts and their memory.',
          'GET', '/hosts'),
    _rule(HOST_SHOW, READER, 'Show one compute host.',
          'GET', '/hosts/{host_name}'),
    _rule(VM_LIST, READER, 'List VMs with their latest memory figures.',
          'GET', '/vms'),
    _rule(VM_SHOW, READER, 'Show one VM.', 'GET', '/vms/{vm_uuid}'),
    _rule(VM_HISTORY, READER, 'Show a VM\'s sample history (balloon, '
                              'WSS, lent and borrowed memory).',
          'GET', '/vms/{vm_uuid}/history'),
    _rule(ROUND_LIST, READER, 'List consolidation rounds.',
          'GET', '/rounds'),
    _rule(ROUND_SHOW, READER, 'Show a consolidation round and its '
                              'migrations.', 'GET', '/rounds/{round_id}'),
    _rule(ROUND_CREATE, ADMIN_OR_SERVICE, 'Start a consolidation round '
                                          '(possibly a dry run).',
          'POST', '/rounds'),
    _rule(ALLOCATION_LIST, READER, 'List remote-memory allocations.',
          'GET', '/allocations'),
    _rule(ALLOCATION_SHOW, READER, 'Show a remote-memory allocation.',
          'GET', '/allocations/{allocation_id}'),
]


def list_rules():
    return base + rules
