"""How a consolidation algorithm declares itself.

An algorithm is a Neat factory ``f(time_step, migration_time, params)``
returning its decide function, registered in ``setup.cfg`` under
``memmut.consolidation.<role>``. It declares its parameters and their
defaults next to itself with :func:`parameters`; the loader checks the
parameters a deployment gives against them.
"""


def parameters(**defaults):
    """Declare a factory's parameters and their defaults (Neat's)."""
    def declare(factory):
        factory.defaults = dict(defaults)
        return factory
    return declare
