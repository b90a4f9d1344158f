"""opx-sim: a calibrated serving model for throughput-vs-interactivity curves on any hardware.

Public API in opx.simulate.api (re-exported here). docs/simulator.md describes the model."""
from opx.simulate.api import (ENGINE, ENGINE_VERSION, SimCurve, SimKnobs, SimResult, calibrate,
                              simulate, validate)

__all__ = ["ENGINE", "ENGINE_VERSION", "SimCurve", "SimKnobs", "SimResult", "calibrate",
           "simulate", "validate"]
