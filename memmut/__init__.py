"""memmut: memory mutualization for OpenStack KVM clouds."""

import warnings

# memmut runs on native threads. oslo.messaging pulls in oslo.service, whose
# default backend is eventlet, and futurist probes for eventlet: select the
# threading backend before either is imported, and keep eventlet's import-
# time deprecation banner (from that probe only) out of every command's
# output.
warnings.filterwarnings('ignore', message=r'\s*Eventlet is deprecated')
# oslo.messaging still imports this module whatever the backend.
warnings.filterwarnings('ignore', category=DeprecationWarning,
                        message='eventletutils module is deprecated')
try:
    from oslo_service import backend as _backend
    _backend.init_backend(_backend.BackendType.THREADING)
except Exception:   # noqa: older oslo.service without backends, or already
    pass            # selected by a host program (nova's test fixtures)
