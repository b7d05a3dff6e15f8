"""memmut-api: the REST API of the global controller.

A small WSGI stack in the manner of placement: WebOb requests, a Routes
mapper, JSON Schema validation, microversions, oslo.policy rules in code,
keystonemiddleware ``auth_token`` and oslo.middleware around it
(:mod:`memmut.api.app`). Served by any WSGI server from the module path
``memmut.wsgi.api:application``.
"""
