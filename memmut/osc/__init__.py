"""``openstack memmut ...``: the python-openstackclient plugin.

Entry points (setup.cfg): ``openstack.cli.extension = memmut`` names
:mod:`memmut.osc.plugin`; ``openstack.memmut.v1`` lists the commands in
:mod:`memmut.osc.v1`. The client is a thin keystoneauth adapter
(:mod:`memmut.osc.client`) over memmut-api.
"""
