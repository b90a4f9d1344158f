"""opx.answers: each page's question answered from the store: the one resolver of the figure at the target, and one module per question.
May import `models`, `opx.store`, `opx.simulate`, `opx.ingest`, `opx.curves` and the base modules; never `opx.publish` or the CLI."""
