"""``openstack memmut`` commands of API version 1."""
