"""Errors that carry what a user needs: the file, the field or line, and what is wrong; and the one
way opx writes a name or a value from a file into a message (`shown`, `printable`), so a file
named with escape codes or newlines can neither forge a line nor drive the terminal."""


def printable(text: object) -> str:
    """`text` with every character that is not printable (control characters such as newline or
    ESC, invisible format characters such as a right-to-left override, lone surrogates from
    undecodable file names) written as its Python escape (`\\n`, `\\x1b`, `\\u202e`); ordinary
    text, accents and all, is unchanged."""
    s = str(text)
    if s.isprintable():
        return s
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in s)


def shown(name: object) -> str:
    """A file name or a value as a message names it: as it is when it is plain text, else quoted
    and escaped as Python writes it (`'bad\\nname.json'`, `''`), so it cannot be mistaken for the
    rest of the line."""
    s = str(name)
    return s if s and s.isprintable() else repr(s)


def brief(value: object, limit: int = 60) -> str:
    """A value from a file as a message quotes it (Python's repr), cut to about `limit`
    characters: a 400-digit number or a 30 MB label is named, not copied into the message."""
    if isinstance(value, int) and value.bit_length() > 200:    # repr fails from 4,300 digits
        return f"an integer of {int(value.bit_length() * 0.30103) + 1:,} digits"
    text = repr(value)
    if len(text) <= limit:
        return text
    size = len(value) if isinstance(value, str) else len(text)
    return f"{text[:limit]}... ({size:,} characters)"


class OpxError(Exception):
    """Shown to users as `error: <file>: <field or line>: <what is wrong>` (`<file>: <what is
    wrong>` when there is no field), the file and field as `shown` writes them and the rest as
    `printable` does. The attributes keep the values as given."""

    def __init__(self, file: str, field: str, problem: str):
        self.file, self.field, self.problem = str(file), str(field), problem
        parts = [shown(self.file)] + ([shown(self.field)] if self.field else []) + [problem]
        super().__init__(printable(": ".join(parts)))


class StoreError(OpxError):
    """The database cannot be opened or written as asked."""


class OutputError(OpxError):
    """A file cannot be written where asked (`error: <path>: <what is wrong>`)."""

    def __init__(self, path: str, problem: str):
        super().__init__(path, "", problem)


class BadParameter(OpxError):
    """A value a command or a request gives that cannot be honoured: `param` names it. `missing`:
    it names something that does not exist (an unknown run or saved view), not a bad value."""

    def __init__(self, param: str, problem: str, *, missing: bool = False, source: str = "LINK"):
        self.param, self.missing = param, missing
        super().__init__(source, param, problem)
