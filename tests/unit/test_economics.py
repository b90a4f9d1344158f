from models import ViewState
from opx.curves.economics import economics_for, with_edits


def test_an_edit_that_differs_from_the_catalog_becomes_an_override(catalog):
    gb300 = catalog.hardware["gb300-nvl72"]
    state = with_edits(catalog, ViewState(), {"gb300-nvl72": (2.0, gb300.power_w_all_in.value)})
    assert state.price == ("gb300-nvl72:2",) and state.power == ()
    e = economics_for(catalog, state, "gb300-nvl72")
    assert (e.usd_per_gpu_hour, e.price_note) == (2.0, "set in this view")
    assert e.power_note.startswith("catalog")


def test_an_edit_back_to_the_catalog_or_emptied_drops_the_override(catalog):
    gb300 = catalog.hardware["gb300-nvl72"]
    state = ViewState(price=("gb300-nvl72:2", "vr-nvl72:9"), power=("vr-nvl72:3000",))
    state = with_edits(catalog, state, {"gb300-nvl72": (gb300.usd_per_gpu_hour.value, None),
                                        "vr-nvl72": (9.0, None)})
    assert state.price == ("vr-nvl72:9",)
    assert state.power == ()
