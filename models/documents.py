"""The JSON documents opx writes: what `opx export LINK --format json` and `GET /api/v1/<page>`
answer, what `runs list` / `runs show` print, and the API's errors. The API's OpenAPI schema is
generated from these models, and tests check every page's document against its model over views
drawn from the database, so the schema cannot drift from what is written.

A document may carry more keys than its model names (`extra="allow"`): a model names what a
program may rely on."""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

Number = float | None


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class Metric(_Open):
    key: str
    label: str
    unit: str
    formula: str


class Configuration(_Open):
    """A configuration behind a figure: the run and the point the figure comes from."""
    run_id: str
    label: str | None = None
    provenance: str | None = None
    throughput_per_gpu: Number = None
    interactivity: Number = None


class Spread(BaseModel):
    """The spread of a figure over the repeated runs it rests on (docs/metrics.md, "Repeated
    runs")."""
    lo: float = Field(description="the least of its runs, in the metric's unit")
    hi: float = Field(description="the most of its runs, in the metric's unit")
    runs: int = Field(description="how many runs")


class Range(BaseModel):
    lo: float
    hi: float


class HardwareAnswer(_Open):
    """One hardware's answer at the target: the resolver's figure, how it was obtained, and its
    peak (`opx.answers.resolve`)."""
    hardware: str
    name: str
    at_target: Number = Field(None, description="the figure at the target in the metric's unit; "
                                                "null when not reachable or no data")
    at_target_status: str | None = Field(None, description="ok, not_reachable, no_data, ...")
    at_target_how: str | None = Field(None, description="how the figure was obtained")
    at_target_how_text: str | None = None
    at_target_kind: str | None = Field(None, description="data, projection or none")
    at_target_bound: bool | None = Field(None, description="true: an 'at least' figure")
    at_target_spread: Spread | None = Field(None, description="over the repeated runs the "
                                            "figure rests on; null: one run, or a projection")
    configurations: list[Configuration] = []
    reachable: bool | None = Field(None, description="null with no data")
    target_provenance: str | None = None
    peak: Number = None
    peak_provenance: str | None = None


class MultipleFields(_Open):
    multiple_at_target: Number = Field(None, description="A(x)/B(x); null when B cannot reach x")
    multiple_at_target_text: str | None = None
    multiple_at_target_kind: str | None = None
    multiple_at_target_range: Range | None = Field(
        None, description="the lowest over the highest and the highest over the lowest of the "
                          "sides' repeated runs; null when neither rests on repeated runs")
    multiple_at_peak: Number = None
    multiple_at_peak_text: str | None = None


class PageHeader(_Open):
    link: str = Field(description="the page that shows this answer, at the address asked")
    page: str
    model: str | None
    workload: str | None
    exported: str = Field(description="the day the document was made (YYYY-MM-DD)")
    notes: list[str] = []


class ViewHeader(PageHeader):
    percentile: str
    target_tok_s_user: float
    metric: Metric
    target_rule: str
    notices: list[str] = []


class ExplorerHardware(HardwareAnswer, MultipleFields):
    simulated_at_target: Number = None
    simulated_at_target_status: str | None = None


class ExplorerDocument(ViewHeader):
    baseline: str | None = None
    hardware: list[ExplorerHardware]


class CompareDocument(ViewHeader, MultipleFields):
    a: HardwareAnswer
    b: HardwareAnswer


class PlannerDocument(PageHeader):
    sla: dict[str, Any]
    demand: dict[str, Any]
    output_share: Number = None
    sizing: str
    ranking: list[dict[str, Any]]
    excluded: list[dict[str, Any]] = []


class LatencyDocument(ViewHeader):
    hardware: list[HardwareAnswer]
    runs_shown: list[dict[str, Any]]
    operating_points: list[dict[str, Any]]


class SimulateDocument(ViewHeader):
    hardware: list[HardwareAnswer]
    projection: dict[str, Any]
    knobs: dict[str, Any]
    envelope: list[dict[str, Any]]
    parameters: dict[str, Any] | None = None


class OverviewCell(_Open):
    """One hardware at one fixed interactivity: the Explorer's fields for that slice and target."""
    target: float
    at_target: Number = None
    at_target_how: str | None = None
    at_target_spread: Spread | None = None
    multiple_at_target: Number = None
    multiple_at_target_range: Range | None = None
    link: str = Field(description="the Explorer view of this slice at this target")


class OverviewHardware(_Open):
    hardware: str
    name: str
    peak: Number = None
    multiple_at_peak: Number = None
    score: Number = Field(None, description="geometric mean of A/B over the range both data "
                                            "envelopes cover; null for the baseline or none")
    score_range: Range | None = None
    at: list[OverviewCell]


class OverviewRow(_Open):
    model: str
    workload: str
    baseline: str
    hardware: list[OverviewHardware]


class OverviewDocument(_Open):
    """`/overview`: every slice with two hardware or more at the statistic."""
    page: str
    percentile: str
    at: list[float]
    rows: list[OverviewRow]
    empty_reason: str = ""


PAGE_DOCUMENTS: dict[str, type[BaseModel]] = {
    "overview": OverviewDocument,
    "explorer": ExplorerDocument, "compare": CompareDocument, "planner": PlannerDocument,
    "latency": LatencyDocument, "simulate": SimulateDocument}


class Run(_Open):
    """A stored run as `runs list --format json` prints it (`opx.store.queries.RUN_LIST_FIELDS`)."""
    id: str
    hardware: str
    model: str
    workload: str
    provenance: str
    gpus_total: int | None = None
    points: int
    meta: dict[str, Any] | str = {}


class RunWithPoints(_Open):
    """`runs show ID --format json`: the run's fields and its points."""
    id: str
    hardware: str
    provenance: str
    points: list[dict[str, Any]]


class RunsPage(BaseModel):
    runs: list[Run]
    limit: int
    next_after: str | None = Field(description="pass as `after` for the next page; null at the end")
    next: str | None = Field(description="the next page's address; null at the end")


class CoverageRow(_Open):
    model: str
    workload: str
    hardware: str


class CoverageDocument(BaseModel):
    coverage: list[CoverageRow]


class FileImported(_Open):
    file: str
    format: str | None
    ok: bool
    runs_added: int
    points_added: int
    error: str | None = None
    notices: list[str] = []


class ImportSummary(BaseModel):
    """What `POST /api/v1/runs` did: the importer's summary, as `ingest` prints it."""
    files: list[FileImported]
    runs_added: int
    points_added: int


class Deleted(BaseModel):
    deleted: str


class Problem(BaseModel):
    """An error (RFC 9457, `application/problem+json`): `detail` is the command line's message."""
    model_config = ConfigDict(extra="allow")
    type: str = "about:blank"
    title: str
    status: int
    detail: str
    parameter: str | None = Field(None, description="the parameter at fault, when one is")
