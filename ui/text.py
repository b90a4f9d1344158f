"""Show text that may come from a link or an imported file as text, never as markup."""
import re

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")


def escape_md(text: str) -> str:
    """Backslash-escape every Markdown/HTML-significant character."""
    return _MD_SPECIAL.sub(r"\\\1", str(text))
