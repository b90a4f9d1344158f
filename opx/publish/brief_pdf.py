"""A brief (`opx.publish.brief.Brief`) as exactly one landscape A4 PDF page.

The page is laid out by fpdf2 (text in an embedded Unicode TrueType font), and the chart is
vl-convert's own vector PDF of the same spec, placed on the page by pypdf (scaled, never
rasterised). Long lists and tables are cut with "and N more" rather than run onto a second page:
the layout is tried with less detail until everything fits, and the last try cuts whatever
still does not (docs/decisions.md, "The brief")."""
from __future__ import annotations

import datetime as dt
import io
import warnings
from dataclasses import dataclass
from pathlib import Path

import vl_convert as vlc
from fpdf import FPDF
from pypdf import PdfReader, PdfWriter, Transformation

from opx.publish.brief import Brief
from opx.curves.metrics import cut_text

PAGE_W, PAGE_H = 297.0, 210.0          # A4 landscape, mm
MARGIN = 10.0
LEFT_W = 166.0                         # headlines and chart
TABLE_SHARE = 0.6                      # of the right column's height, at most, for the table
GAP = 5.0
RIGHT_X = MARGIN + LEFT_W + GAP
RIGHT_W = PAGE_W - MARGIN - RIGHT_X
FOOTER_H = 9.0
BOTTOM = PAGE_H - MARGIN - FOOTER_H    # the content's lower edge
PT_PER_MM = 72 / 25.4
INK, MUTED, ACCENT, RULE = (29, 39, 51), (86, 101, 122), (11, 61, 110), (200, 208, 218)

# Unicode fonts, first found wins; without any, the PDF core font (Latin-1 text only).
FONT_DIRS = (Path("/usr/share/fonts"), Path("/usr/local/share/fonts"),
             Path.home() / ".local/share/fonts")
FONT_FILES = (("DejaVuSansCondensed.ttf", "DejaVuSansCondensed-Bold.ttf",
               "DejaVuSansCondensed-Oblique.ttf"),
              ("DejaVuSans.ttf", "DejaVuSans-Bold.ttf", "DejaVuSans-Oblique.ttf"),
              ("LiberationSansNarrow-Regular.ttf", "LiberationSansNarrow-Bold.ttf",
               "LiberationSansNarrow-Italic.ttf"),
              ("LiberationSans-Regular.ttf", "LiberationSans-Bold.ttf",
               "LiberationSans-Italic.ttf"))


def _find_font() -> tuple[Path, Path, Path] | None:
    for names in FONT_FILES:
        found = []
        for name in names:
            hit = next((p for d in FONT_DIRS if d.is_dir() for p in d.rglob(name)), None)
            if hit is None:
                break
            found.append(hit)
        if len(found) == 3:
            return found[0], found[1], found[2]
    return None


@dataclass(frozen=True)
class Detail:
    """How much of each list one try keeps."""
    figures: int          # figures per headline group
    columns: int          # columns of the table beside its first
    sources: int          # sources per provenance
    items: int            # assumptions, notes, fleet notes
    chars: int            # characters of one list item
    cell_chars: int
    meanings: bool


DETAILS = (Detail(3, 4, 3, 6, 260, 90, True), Detail(2, 4, 2, 4, 190, 70, True),
           Detail(2, 3, 1, 3, 150, 50, False), Detail(1, 3, 1, 2, 110, 40, False))


def _short(text: str, chars: int) -> str:
    """`text` on one line in at most `chars` characters, cut between words (never inside one)."""
    return cut_text(" ".join(str(text).split()), chars)


def _more(shown: list, total: int) -> str:
    if total <= len(shown):
        return ""
    return (f"and {total - len(shown):,} more" if shown
            else f"{total:,} not shown for want of room: see the HTML brief")


class _Page:
    """One try at the page: writes down the columns and remembers whether anything was cut for
    space (`overflow`)."""

    def __init__(self, brief: Brief, detail: Detail, font):
        self.brief, self.d = brief, detail
        self.pdf = FPDF(orientation="L", unit="mm", format="A4")
        self.pdf.set_auto_page_break(False)
        self.pdf.set_margins(MARGIN, MARGIN, MARGIN)
        self.pdf.set_creation_date(dt.datetime.combine(brief.exported, dt.time(),
                                                       tzinfo=dt.timezone.utc))
        self.pdf.set_title(brief.title)
        self.pdf.set_author("opx")
        self.pdf.set_creator(f"opx {brief.version}")
        self.pdf.set_subject(brief.link)
        self.unicode = font is not None
        if font:
            for style, path in zip(("", "B", "I"), font):
                self.pdf.add_font("Sans", style, str(path))
            self.family = "Sans"
        else:
            self.family = "Helvetica"
        self.pdf.add_page()
        self.overflow = False
        self.chart_box = (MARGIN, MARGIN, LEFT_W, 10.0)

    # -- text helpers --------------------------------------------------------------------------
    def text(self, value: str) -> str:
        value = str(value)
        if self.unicode:
            return value
        return (value.replace("÷", "/").replace("≥", ">=").replace("≤", "<=").replace("…", "...")
                .replace("–", "-").replace("·", "-").encode("latin-1", "replace").decode("latin-1"))

    def font(self, size: float, style: str = "", color=INK) -> None:
        self.pdf.set_font(self.family, style, size)
        self.pdf.set_text_color(*color)

    def height(self, w: float, line: float, text: str) -> float:
        return self.pdf.multi_cell(w, line, self.text(text), dry_run=True, output="HEIGHT")

    def write(self, x: float, y: float, w: float, line: float, text: str, align="L") -> float:
        """Writes `text` wrapped to `w` at (x, y); returns the y below it."""
        self.pdf.set_xy(x, y)
        self.pdf.multi_cell(w, line, self.text(text), align=align)
        return self.pdf.get_y()

    # -- the page ------------------------------------------------------------------------------
    def layout(self) -> "_Page":
        b = self.brief
        self.font(14, "B")
        y = self.write(MARGIN, MARGIN, PAGE_W - 2 * MARGIN, 6.2, b.title)
        self.font(8, "", MUTED)
        y = self.write(MARGIN, y + 0.5, PAGE_W - 2 * MARGIN, 3.8, b.subtitle) + 2.5
        left = self.headlines(y)
        self.chart_box = (MARGIN, left + 1.5, LEFT_W, BOTTOM - left - 1.5)
        self.right_column(y)
        self.footer()
        return self

    def headlines(self, top: float) -> float:
        groups: dict[str, list] = {}
        for h in self.brief.headlines:
            groups.setdefault(h.heading, []).append(h)
        if not groups:
            return top
        n = len(groups)
        w = (LEFT_W - 3 * (n - 1)) / n
        bottoms = []
        for i, (heading, items) in enumerate(groups.items()):
            x = MARGIN + i * (w + 3)
            shown = items[:self.d.figures]
            self.font(7.5, "B", (52, 73, 94))
            y = self.write(x + 2, top + 1.5, w - 4, 3.4, heading)
            for h in shown:
                self.font(17 if len(shown) == 1 else 13, "B", ACCENT)
                self.pdf.set_xy(x + 2, y + 0.5)
                value_w = self.pdf.get_string_width(self.text(h.value)) + 2
                self.pdf.cell(value_w, 7 if len(shown) == 1 else 5.5, self.text(h.value))
                self.font(8, "B")
                self.write(x + 2 + value_w, y + (2.2 if len(shown) == 1 else 1.3),
                           max(w - 4 - value_w, 15), 3.4, _short(h.label, 70))
                y = max(self.pdf.get_y(), y + (7.5 if len(shown) == 1 else 6))
                self.font(6.8, "", MUTED)
                y = self.write(x + 2, y, w - 4, 3.0, _short(h.caption, self.d.chars))
            more = _more(shown, len(items))
            if more:
                self.font(6.8, "I", MUTED)
                y = self.write(x + 2, y, w - 4, 3.0, more + " (see the table)")
            meaning = self.brief.meanings.get(items[0].kind, "")
            if meaning and self.d.meanings:
                self.font(6.5, "I", MUTED)
                y = self.write(x + 2, y + 0.8, w - 4, 2.9, meaning)
            bottoms.append((x, y + 1.5))
        bottom = max(b for _, b in bottoms)
        self.pdf.set_draw_color(*RULE)
        self.pdf.set_line_width(0.25)
        for x, _ in bottoms:
            self.pdf.rect(x, top, w, bottom - top)
        return bottom

    def section(self, y: float, title: str) -> float:
        self.font(8.5, "B")
        y = self.write(RIGHT_X, y + 1.8, RIGHT_W, 4, title)
        self.pdf.set_draw_color(*RULE)
        self.pdf.set_line_width(0.25)
        self.pdf.line(RIGHT_X, y, RIGHT_X + RIGHT_W, y)
        return y + 0.8

    def items(self, y: float, items: list[str], limit: int | None = None,
              whole: bool = False) -> float:
        """Bulleted lines; what does not fit in the column is cut with "and N more". `whole`:
        each line is written whole (a caveat is never shortened)."""
        limit = self.d.items if limit is None else limit
        shown = [i if whole else _short(i, self.d.chars) for i in items[:limit]]
        self.font(6.8, "", INK)
        for k, item in enumerate(shown):
            h = self.height(RIGHT_W - 3, 2.95, item)
            if y + h > BOTTOM - 3.2 and k == 0 and not whole and y + 2.95 <= BOTTOM - 3.2:
                # no room for the first item whole: it is cut to one line rather than left out
                item = next((c for n in range(len(item), 8, -4)
                             if self.height(RIGHT_W - 3, 2.95, c := _short(item, n)) <= 2.95),
                            item)
                h = self.height(RIGHT_W - 3, 2.95, item)
            if y + h > BOTTOM - 3.2:
                self.overflow = True
                shown = shown[:k]
                break
            self.pdf.set_xy(RIGHT_X, y)
            self.pdf.cell(3, 2.95, self.text("•"))
            y = self.write(RIGHT_X + 3, y, RIGHT_W - 3, 2.95, item) + 0.4
        more = _more(shown, len(items))
        if more:
            self.font(6.8, "I", MUTED)
            y = self.write(RIGHT_X + 3, y, RIGHT_W - 3, 2.95, more) + 0.4
        return y

    def table(self, y: float) -> float:
        t = self.brief.table
        if not t.rows:
            self.font(7, "", MUTED)
            return self.write(RIGHT_X, y + 0.5, RIGHT_W, 3.2, "No system under these filters.")
        cols = min(len(t.columns) - 1, self.d.columns)
        # a long table stops short of the column's foot: provenance and assumptions always show
        foot = y + TABLE_SHARE * (BOTTOM - 3.2 - y)
        label_w = 32.0
        w = (RIGHT_W - label_w) / cols
        widths = [label_w] + [w] * cols
        rows = [t.columns[:cols + 1]] + [r[:cols + 1] for r in t.rows]
        self.pdf.set_draw_color(*RULE)
        self.pdf.set_line_width(0.2)
        for i, row in enumerate(rows):
            cells = [_short(c, self.d.cell_chars) for c in row]
            h = 0.0
            for j, (cw, c) in enumerate(zip(widths, cells)):
                self.font(6.5, "B" if i == 0 or j == 0 else "")
                h = max(h, self.height(cw - 1.6, 2.8, c))
            h += 1.0
            if y + h > foot:
                # the HTML brief holds the rest: a cut table is no reason for less detail
                self.font(6.8, "I", MUTED)
                return self.write(RIGHT_X, y + 0.3, RIGHT_W, 3,
                                  f"and {len(rows) - i:,} more rows (see the HTML brief)")
            x = RIGHT_X
            for j, (cw, c) in enumerate(zip(widths, cells)):
                if i == 0 or j == 0:
                    self.pdf.set_fill_color(238, 242, 246)
                    self.pdf.rect(x, y, cw, h, style="DF")
                else:
                    self.pdf.rect(x, y, cw, h)
                self.font(6.5, "B" if i == 0 or j == 0 else "")
                self.write(x + 0.8, y + 0.5, cw - 1.6, 2.8, c)
                x += cw
            y += h
        if len(t.columns) - 1 > cols:
            self.font(6.8, "I", MUTED)
            y = self.write(RIGHT_X, y + 0.3, RIGHT_W, 3,
                           f"and {len(t.columns) - 1 - cols:,} more columns (see the HTML brief)")
        return y

    def right_column(self, top: float) -> None:
        b, d = self.brief, self.d
        y = self.section(top - 1.8, b.table_title)
        y = self.table(y + 0.5)
        if b.fleet_notes:
            y = self.items(y + 0.8, b.fleet_notes)
        if b.caveats:
            y = self.section(y, "Caveats of these figures")
            y = self.items(y, b.caveats, limit=len(b.caveats), whole=True)
        y = self.section(y, "Provenance and sources")
        lines = []
        for e in b.evidence:
            srcs = [_short(s, 120) for s in e.sources[:d.sources]]
            more = _more(srcs, len(e.sources))
            lines.append(f"{e.provenance}: {e.runs:,} run(s), {e.points:,} point(s); source"
                         f"{'s' if len(e.sources) != 1 else ''}: "
                         + ("; ".join(srcs) + (f"; {more}" if more else "") if srcs
                            else "none stated"))
        y = self.items(y, lines or ["No figures under these filters."], limit=len(lines) or 1)
        if b.simulated_errors:
            y = self.items(y, [e if e.startswith("Simulated curves") else
                               f"Simulated curves' error: {e}" for e in b.simulated_errors],
                           limit=2)
        y = self.section(y, "Assumptions")
        y = self.items(y, b.assumptions)
        if b.notes:
            y = self.section(y, "Notes")
            self.items(y, b.notes)

    def footer(self) -> None:
        b = self.brief
        self.pdf.set_draw_color(*RULE)
        self.pdf.line(MARGIN, BOTTOM + 1.5, PAGE_W - MARGIN, BOTTOM + 1.5)
        self.font(7, "B", INK)
        self.pdf.set_xy(MARGIN, BOTTOM + 2.2)
        self.pdf.cell(17, 3.2, self.text("Live view:"))
        self.font(7, "", ACCENT)
        link = _short(b.link, 300)
        self.pdf.set_xy(MARGIN + 17, BOTTOM + 2.2)
        self.pdf.multi_cell(PAGE_W - 2 * MARGIN - 17, 3.2, self.text(link),
                            link=b.link if b.link.startswith(("http://", "https://")) else "")
        self.font(7, "", MUTED)
        self.pdf.set_xy(MARGIN, PAGE_H - MARGIN - 3.2)
        self.pdf.cell(PAGE_W - 2 * MARGIN, 3.2, self.text(b.footer))


def render(brief: Brief) -> bytes:
    font = _find_font()
    chart = PdfReader(io.BytesIO(vlc.vegalite_to_pdf(brief.chart))).pages[0]
    with warnings.catch_warnings():            # a glyph the font lacks is left out, quietly
        warnings.simplefilter("ignore")
        for detail in DETAILS:
            page = _Page(brief, detail, font).layout()
            if not page.overflow:
                break
        layout = bytes(page.pdf.output())
    writer = PdfWriter(clone_from=io.BytesIO(layout))
    sheet = writer.pages[0]
    x, y, w, h = page.chart_box
    cw, ch = float(chart.mediabox.width), float(chart.mediabox.height)
    scale = min(w * PT_PER_MM / cw, h * PT_PER_MM / ch)
    left = x * PT_PER_MM + (w * PT_PER_MM - cw * scale) / 2
    bottom = (PAGE_H - y) * PT_PER_MM - ch * scale          # top-aligned in its box
    sheet.merge_transformed_page(chart, Transformation().scale(scale).translate(left, bottom))
    writer.add_metadata({"/Title": brief.title, "/Author": "opx", "/Subject": brief.link,
                         "/Creator": f"opx {brief.version}", "/Producer": "opx (fpdf2, pypdf)",
                         "/CreationDate": f"D:{brief.exported:%Y%m%d}000000Z"})
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()
