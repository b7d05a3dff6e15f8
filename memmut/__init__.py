"""memmut: memory mutualization for OpenStack KVM clouds."""
