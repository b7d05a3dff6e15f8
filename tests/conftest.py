"""Import memmut before any OpenStack library, so that its choice of the
threading backend (see memmut/__init__.py) holds in every test."""

import memmut  # noqa: F401
