"""What remote memory serves of the hosts' memory overload."""

import numpy as np

from memmut.simulator import remote_memory as rm


def test_off_leaves_every_excess_unserved():
    served, unserved = rm.serve([1200, 500], [1000, 500], [True, True],
                                1000, 0.0)
    assert served.tolist() == [0, 0]
    assert unserved.tolist() == [200, 0]


def test_excess_served_up_to_the_fraction_from_free_memory():
    # h0 200 over; h1 free: 1000 - max(400 use, 600 ballooned) = 400.
    served, unserved = rm.serve([1200, 400], [1000, 600], [True, True],
                                1000, 0.1)
    assert served.tolist() == [100, 0]      # the fraction caps it
    assert unserved.tolist() == [100, 0]
    served, unserved = rm.serve([1200, 400], [1000, 600], [True, True],
                                1000, 0.5)
    assert served.tolist() == [200, 0] and unserved.tolist() == [0, 0]


def test_short_lenders_share_what_they_have():
    # Two hosts 300 over each, lenders have 150 + 150 free: each gets
    # half of what it asked for.
    served, unserved = rm.serve([1300, 1300, 850, 850], [0, 0, 0, 0],
                                [True] * 4, 1000, 0.5)
    assert np.allclose(served, [150, 150, 0, 0])
    assert np.allclose(unserved, [150, 150, 0, 0])


def test_suspended_hosts_neither_borrow_nor_lend():
    served, unserved = rm.serve([1200, 0, 900], [0, 0, 0],
                                [True, False, True], 1000, 0.5)
    assert np.allclose(served, [100, 0, 0])
    assert np.allclose(unserved, [100, 0, 0])
