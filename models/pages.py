"""The pages of opx, in one registry: `app.py` builds its navigation from it, `opx.links` its
paths, the view state its page names, and the tests their page lists. Adding a page is adding a
row here and its script in `app_pages/`."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PageSpec:
    name: str          # the name the view state uses for the page's own fields
    path: str          # its address: the Explorer is `/`
    title: str
    icon: str          # a Material icon, so it renders without an emoji font
    script: str        # the page's file, relative to the repository root
    nav: bool = True   # listed in the sidebar's navigation


PAGES: tuple[PageSpec, ...] = (
    PageSpec("explorer", "/", "Explorer", ":material/monitoring:", "app_pages/explorer.py"),
    PageSpec("overview", "/overview", "Overview", ":material/table_chart:",
             "app_pages/overview.py"),
    PageSpec("compare", "/compare", "Compare", ":material/compare_arrows:", "app_pages/compare.py"),
    PageSpec("planner", "/planner", "Planner", ":material/calculate:", "app_pages/planner.py"),
    PageSpec("latency", "/latency", "Latency", ":material/timer:", "app_pages/latency.py"),
    PageSpec("simulate", "/simulate", "Simulate", ":material/science:", "app_pages/simulate.py"),
    PageSpec("data", "/data", "Data", ":material/database:", "app_pages/data.py"),
    # The chart of a view alone, for an <iframe>: no sidebar, no navigation (app.py hides both).
    PageSpec("embed", "/embed", "Embedded chart", ":material/picture_in_picture:",
             "app_pages/embed.py", nav=False),
)
PAGE_NAMES: tuple[str, ...] = tuple(p.name for p in PAGES)
PAGE_BY_PATH: dict[str, str] = {p.path: p.name for p in PAGES}
