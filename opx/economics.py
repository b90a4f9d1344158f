"""Prices and powers per hardware: catalog defaults, overridden by the view (`price`, `power`),
with each figure's source and whether it is assumed, so cost and power metrics can say so."""
from __future__ import annotations

from dataclasses import dataclass

from models import Catalog, ViewState


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
