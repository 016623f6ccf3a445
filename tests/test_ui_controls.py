"""Parsing and encoding of URL values: every control round-trips and rejects junk clearly."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rlviz import ui

CONTROLS = [
    ui.FloatSlider(name="g", label="γ", min=0.0, max=1.0, value=0.9),
    ui.IntSlider(name="n", label="n", min=1, max=500, value=100),
    ui.Number(name="a", label="α", min=-5.0, max=5.0, value=0.5),
    ui.Number(name="k", label="k", min=0, max=10, value=3, integer=True),
    ui.Choice(name="c", label="c", options=["vi", "pi"], value="pi"),
    ui.SelectSlider(name="t", label="θ", options=[1e-8, 1e-4, 0.01], value=1e-4),
    ui.MultiChoice(name="m", label="m", options=["x", "y", "z"], value=["y"]),
    ui.Toggle(name="b", label="b", value=True),
    ui.Seed(),
    ui.Text(name="s", label="s", value="S.G", max_chars=20),
]


@pytest.mark.parametrize("control", CONTROLS, ids=lambda c: type(c).__name__)
def test_default_round_trips(control):
    assert control.parse(control.encode(control.default)) == control.default


@pytest.mark.parametrize(
    ("control", "raw", "reason"),
    [
        (CONTROLS[0], "abc", "not a number"),
        (CONTROLS[0], "1.5", r"outside \[0, 1\]"),
        (CONTROLS[0], "nan", "not a finite number"),
        (CONTROLS[0], "inf", "not a finite number"),
        (CONTROLS[1], "3.5", "not a whole number"),
        (CONTROLS[1], "0", "outside"),
        (CONTROLS[3], "11", "outside"),
        (CONTROLS[4], "qlearning", "not one of the options"),
        (CONTROLS[5], "0.5", "not one of the slider's values"),
        (CONTROLS[6], "x,w", "item 2 is not one of the options"),
        (CONTROLS[7], "maybe", "not on/off"),
        (CONTROLS[8], "-1", "outside"),
        (CONTROLS[9], "x" * 21, "longer than 20"),
    ],
)
def test_junk_is_rejected_with_a_reason(control, raw, reason):
    with pytest.raises(ValueError, match=reason):
        control.parse(raw)


def test_friendly_spellings():
    assert CONTROLS[7].parse("off") is False and CONTROLS[7].parse("TRUE") is True
    assert CONTROLS[5].parse("1e-08") == 1e-8  # numeric match for log sliders
    assert CONTROLS[6].parse("z, x,,z") == ["z", "x"]  # order kept, duplicates dropped


def test_default_must_be_an_option():
    with pytest.raises(ValueError, match="not an option"):
        ui.Choice(name="c", label="c", options=["a"], value="b")


@given(st.floats(min_value=0.0, max_value=1.0, allow_nan=False))
def test_float_round_trip_is_exact_enough(x):
    control = CONTROLS[0]
    assert math.isclose(control.parse(control.encode(x)), x, rel_tol=1e-9, abs_tol=1e-12)


@given(st.text(max_size=60))
def test_any_text_either_parses_or_raises_value_error(raw):
    for control in CONTROLS:
        try:
            control.parse(raw)
        except ValueError:
            pass


def test_params_reads_by_name_and_attribute():
    p = ui.Params({"gamma": 0.9})
    assert p.gamma == p["gamma"] == 0.9 and dict(p) == {"gamma": 0.9}
    with pytest.raises(AttributeError):
        _ = p.missing
