"""One rule sizes a VM for the agent and the controller."""

import numpy as np

from memmut import sizing


def test_headroom_is_the_larger_of_amount_and_fraction():
    assert sizing.headroom(1000, 32, 0.05) == 50
    assert sizing.headroom(100, 32, 0.05) == 32
    assert sizing.headroom(100) == 0
    assert isinstance(sizing.headroom(1000, 32, 0.05), int)


def test_headroom_on_arrays_and_floats():
    out = sizing.headroom(np.array([100.0, 1000.0]), 32, 0.05)
    assert out.tolist() == [32.0, 50.0]
    assert sizing.headroom(1000.0, 32, 0.05) == 50.0


def test_demand_adds_the_larger_headroom_and_caps_at_booking():
    # 5 % of 1000 = 50 < 64: +64; 5 % of 4000 = 200 > 64; capped at 4100
    d = sizing.demand([1000, 4000], booked=[8000, 4100], headroom_kb=64,
                      headroom_fraction=0.05)
    assert d.tolist() == [1064, 4100]


def test_packing_figure_is_the_higher_of_max_avg_and_the_floor():
    assert sizing.packing_kb(200, 300) == 300
    assert sizing.packing_kb(200, 100) == 200
    # no floor (0: none; None: not reported) or not asked for
    assert sizing.packing_kb(200, 0) == 200
    assert sizing.packing_kb(200, None) == 200
    assert sizing.packing_kb(200, 300, carry_floor=False) == 200
    # no WSS^max_avg reported: nothing to pack on, floor or not
    assert sizing.packing_kb(None, 300) is None


def test_packing_figure_is_capped_at_the_booking_when_given():
    assert sizing.packing_kb(200, 900, booked_kb=512) == 512
    assert sizing.packing_kb(600, None, booked_kb=512) == 512
    assert sizing.packing_kb(200, 300, booked_kb=512) == 300
    assert sizing.packing_kb(None, 300, booked_kb=512) is None
