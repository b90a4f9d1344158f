"""opx.ingest: files into validated `models.Run` objects: one module per format, the rules they share, the built-in data.
May import `models`, `opx.curves` and the base modules (config, errors, catalog); never the store or anything above it."""
