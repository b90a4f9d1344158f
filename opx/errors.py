"""Errors that carry what a user needs: the file, the field or line, and what is wrong."""


class OpxError(Exception):
    """Shown to users as `error: <file>: <field or line>: <what is wrong>`."""

    def __init__(self, file: str, field: str, problem: str):
        self.file, self.field, self.problem = str(file), str(field), problem
        super().__init__(f"{self.file}: {self.field}: {problem}")


class StoreError(OpxError):
    """The database cannot be opened or written as asked."""
