"""Fixtures of the functional tests."""

from tests.functional.harness.fixtures import *  # noqa
from tests.functional.harness.services import *  # noqa
