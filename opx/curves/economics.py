"""Prices and powers per hardware: catalog defaults, overridden by the view (`price`, `power`),
with each figure's source and whether it is assumed, so cost and power metrics can say so."""
from __future__ import annotations

from dataclasses import dataclass

from models import Catalog, ViewState
from models.view import format_number


@dataclass(frozen=True)
class Economics:
    hardware: str
    usd_per_gpu_hour: float
    watts_per_gpu: float
    price_note: str        # "catalog", "catalog, assumed", "set in this view"
    power_note: str

    @property
    def assumed(self) -> bool:
        return "assumed" in self.price_note or "assumed" in self.power_note

    def describe(self, name: str) -> str:
        return (f"{name}: ${self.usd_per_gpu_hour:g}/GPU-hour ({self.price_note}), "
                f"{self.watts_per_gpu:g} W all-in per GPU ({self.power_note})")


def economics_for(catalog: Catalog, state: ViewState, hardware: str) -> Economics | None:
    """None when the catalog has no price or power for this hardware and the view sets none."""
    prices, powers = state.overrides("price"), state.overrides("power")
    hw = catalog.hardware.get(hardware)
    if hw is None and (hardware not in prices or hardware not in powers):
        return None
    if hardware in prices:
        price, price_note = prices[hardware], "set in this view"
    else:
        price = hw.usd_per_gpu_hour.value
        price_note = "catalog, assumed" if hw.usd_per_gpu_hour.assumed else "catalog"
    if hardware in powers:
        watts, power_note = powers[hardware], "set in this view"
    else:
        watts = hw.power_w_all_in.value
        power_note = "catalog, assumed" if hw.power_w_all_in.assumed else "catalog"
    return Economics(hardware, price, watts, price_note, power_note)


def with_edits(catalog: Catalog, state: ViewState,
               edits: dict[str, tuple[float | None, float | None]]) -> ViewState:
    """The state with edited prices and powers ({hardware: ($/GPU-hour, W per GPU)}): a value
    that differs from the catalog becomes an override in the link, one equal to it (or emptied)
    drops the override."""
    prices, powers = dict(state.overrides("price")), dict(state.overrides("power"))
    for hw, (price, watts) in edits.items():
        spec = catalog.hardware.get(hw)
        defaults = (spec.usd_per_gpu_hour.value if spec else None,
                    spec.power_w_all_in.value if spec else None)
        for overrides, value, default in ((prices, price, defaults[0]),
                                          (powers, watts, defaults[1])):
            if value is not None and value != default:
                overrides[hw] = value
            else:
                overrides.pop(hw, None)
    return state.model_copy(update={
        "price": tuple(f"{k}:{format_number(v)}" for k, v in sorted(prices.items())),
        "power": tuple(f"{k}:{format_number(v)}" for k, v in sorted(powers.items()))})
