"""Fixtures of the functional tests."""

from tests.harness.fixtures import *  # noqa
from tests.harness.services import *  # noqa
from tests.harness.keystone import *  # noqa
from tests.harness.netns import *  # noqa
