"""A brief (`opx.publish.brief.Brief`) as one self-contained HTML file that opens offline and runs no
script: the chart is inline SVG (`opx.publish.export.chart_svg`, checked to hold no active content),
the style is inline, and a Content-Security-Policy forbids every fetch. Every text from data or
links goes through `opx.publish.export.html_text`, so labels and notes stay text."""
from __future__ import annotations

from urllib.parse import urlsplit

from opx.publish.brief import Brief, Table
from opx.publish.export import chart_svg, html_text

# Nothing may be fetched or run: no script, no remote font, style sheet, image or frame.
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

# Lists longer than this say "and N more" (the PDF keeps fewer: it has one page).
MAX_ITEMS = 40

STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI","Liberation Sans","DejaVu Sans",Arial,sans-serif;
color:#1d2733;margin:0 auto;max-width:1180px;padding:24px 28px 40px;background:#fff}
h1{font-size:23px;line-height:1.25;margin:0 0 4px}h2{font-size:15px;margin:22px 0 8px;
border-bottom:1px solid #d8dee6;padding-bottom:3px}p{margin:4px 0}
.sub{color:#4a5868;margin-bottom:14px}
.headlines{display:flex;gap:14px;flex-wrap:wrap}
.group{flex:1 1 300px;border:1px solid #d8dee6;border-radius:6px;padding:10px 14px;background:#f7f9fb}
.group h3{font-size:13px;margin:0 0 6px;color:#34495e;text-transform:none}
.fig{display:flex;align-items:baseline;gap:10px;margin:6px 0 0}
.value{font-size:30px;font-weight:700;color:#0b3d6e;white-space:nowrap}
.label{font-weight:600}.caption{color:#4a5868;font-size:13px;margin:0 0 4px}
.meaning{font-size:12.5px;color:#56657a;font-style:italic;margin-top:6px}
figure{margin:18px 0 0;overflow-x:auto}figure svg{max-width:100%;height:auto}
table{border-collapse:collapse;font-size:13px;width:100%}
th,td{border:1px solid #d8dee6;padding:4px 7px;text-align:left;vertical-align:top}
thead th{background:#eef2f6}tbody th{font-weight:600;background:#f7f9fb;width:26%}
ul{margin:4px 0;padding-left:20px}li{margin:2px 0}.more{color:#56657a;font-style:italic}
footer{margin-top:26px;border-top:1px solid #d8dee6;padding-top:8px;font-size:12.5px;color:#4a5868}
footer a{color:#0b3d6e;word-break:break-all}.link{word-break:break-all}
"""


def _ul(items: list[str], limit: int = MAX_ITEMS) -> str:
    shown = "".join(f"<li>{html_text(i)}</li>" for i in items[:limit])
    more = (f'<li class="more">and {len(items) - limit:,} more</li>'
            if len(items) > limit else "")
    return f"<ul>{shown}{more}</ul>"


def _table(table: Table, limit: int = MAX_ITEMS) -> str:
    if not table.rows:
        return "<p>No system under these filters.</p>"
    head = "".join(f"<th>{html_text(c)}</th>" for c in table.columns)
    body = "".join("<tr><th>" + html_text(r[0]) + "</th>"
                   + "".join(f"<td>{html_text(c)}</td>" for c in r[1:]) + "</tr>"
                   for r in table.rows[:limit])
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def live_link(link: str) -> str:
    """The link back as an anchor when it is a web address, else as text (never a script URL)."""
    if urlsplit(link).scheme.lower() in ("http", "https"):
        return f'<a class="link" href="{html_text(link)}">{html_text(link)}</a>'
    return f'<span class="link">{html_text(link)}</span>'


def _headlines(brief: Brief) -> str:
    groups: dict[str, list] = {}
    for h in brief.headlines:
        groups.setdefault(h.heading, []).append(h)
    out = []
    for heading, items in groups.items():
        figs = "".join(
            f'<div class="fig"><span class="value">{html_text(h.value)}</span>'
            f'<span class="label">{html_text(h.label)}</span></div>'
            f'<p class="caption">{html_text(h.caption)}</p>' for h in items)
        meaning = brief.meanings.get(items[0].kind, "")
        out.append(f'<div class="group {html_text(items[0].kind.replace(" ", "-"))}">'
                   f"<h3>{html_text(heading)}</h3>{figs}"
                   + (f'<p class="meaning">{html_text(meaning)}</p>' if meaning else "")
                   + "</div>")
    return f'<section class="headlines">{"".join(out)}</section>'


def _svg(spec: dict) -> str:
    svg = chart_svg(spec).decode()
    if svg.startswith("<?xml"):
        svg = svg.split("?>", 1)[1]
    return svg.strip()


def render(brief: Brief) -> bytes:
    evidence = [f"{e.provenance}: {e.runs:,} run(s), {e.points:,} point(s). Sources: "
                + ("; ".join(e.sources[:12]) + (f"; and {len(e.sources) - 12:,} more"
                                                 if len(e.sources) > 12 else "")
                   if e.sources else "none stated") for e in brief.evidence]
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="referrer" content="no-referrer">',
        f"<title>{html_text(brief.title)}</title><style>{STYLE}</style></head><body>",
        f"<header><h1>{html_text(brief.title)}</h1>"
        f'<p class="sub">{html_text(brief.subtitle)}</p></header>',
        _headlines(brief),
        (f'<section class="caveats"><h2>Caveats of these figures</h2>{_ul(brief.caveats)}'
         "</section>" if brief.caveats else ""),
        f'<figure class="chart" aria-label="chart">{_svg(brief.chart)}</figure>',
        f"<section><h2>{html_text(brief.table_title)}</h2>{_table(brief.table)}",
        (_ul(brief.fleet_notes) if brief.fleet_notes else ""), "</section>",
        "<section><h2>Provenance and sources</h2>",
        _ul(evidence) if evidence else "<p>No figures under these filters.</p>",
        ("<h3>Simulated curves: their error</h3>" + _ul(brief.simulated_errors)
         if brief.simulated_errors else ""), "</section>",
        f"<section><h2>Assumptions</h2>{_ul(brief.assumptions)}</section>",
        (f"<section><h2>Notes</h2>{_ul(brief.notes)}</section>" if brief.notes else ""),
        f"<footer><p>Live view: {live_link(brief.link)}</p><p>{html_text(brief.footer)}</p>"
        "</footer></body></html>",
    ]
    return ("\n".join(p for p in parts if p) + "\n").encode()
