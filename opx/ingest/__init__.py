"""Importers: one module per format, each turning a file into validated `models.Run` objects."""
