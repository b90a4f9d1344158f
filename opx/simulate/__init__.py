"""opx.simulate: a calibrated serving model for throughput-vs-interactivity curves on any hardware, and its anchored fits.
May import `models`, `opx.ingest`, `opx.curves` and the base modules; never the store or anything above it.

Public API in opx.simulate.api (re-exported here). docs/simulator.md describes the model."""
from opx.simulate.api import (ENGINE, ENGINE_VERSION, SimCurve, SimKnobs, SimResult, calibrate,
                              simulate, validate)

__all__ = ["ENGINE", "ENGINE_VERSION", "SimCurve", "SimKnobs", "SimResult", "calibrate",
           "simulate", "validate"]
