"""Show text that may come from a link or an imported file as text, never as markup.

Streamlit reads Markdown (GitHub's, plus colour directives, emoji shortcodes, Material icons and
LaTeX) in titles, subheaders, captions, alerts, metric labels and `st.write`. A backslash before
a punctuation character stops every construct the parser recognises while it reads: emphasis,
links, images, HTML, headings, lists, tables, `$` math, `:red[...]` directives. Some are found in
the text only after parsing, when the backslash is gone: literal autolinks (`https://...`,
`www.example`, `name@host.example`), emoji shortcodes (`:smile:`) and icons (`:material/x:`).
Those are broken by a WORD JOINER (U+2060, invisible and zero-width) after every `:` and `@` and
between `www` and its dot, so the text reads the same and never becomes a link, an image or an
icon (docs/sharing.md, "Safe by construction")."""
import re

WORD_JOINER = "\u2060"

# Every character Markdown, GFM or Streamlit's extensions give a meaning (CommonMark lets any
# ASCII punctuation be escaped): emphasis, code, links and images, headings and setext
# underlines (`=`), lists, tables, HTML and entities (`&`), strikethrough, math, directives.
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:&=])")
# Patterns found after parsing: break them with the word joiner.
_AFTER_PARSE = re.compile(r"(?<=\\:)|(?<=@)|(?i:(?<=www)(?=\\\.))")


def escape_md(text: str) -> str:
    """`text` as Markdown that Streamlit shows exactly as typed: no markup, link, image, colour,
    icon, emoji or math."""
    escaped = _MD_SPECIAL.sub(r"\\\1", str(text))
    return _AFTER_PARSE.sub(WORD_JOINER, escaped)
