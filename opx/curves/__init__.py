"""opx.curves: the arithmetic on operating points every layer shares: Pareto frontiers and values on them, the metric registry, prices and powers.
May import `models` and the base modules only."""
