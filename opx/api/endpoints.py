"""The JSON API, `/api/v1/...`: one `Endpoint` per operation, from which both the routes and the
OpenAPI schema (`opx.api.openapi`) are made, so a documented operation is a served one.

Each page's answer is `opx.publish.document.document`, the function `opx export` calls, read
strictly: a value the page would drop with a notice is a 400 naming it. Handlers run in worker
threads (the store and the resolver are blocking code), never on the server's event loop."""
from __future__ import annotations

import datetime as dt
import functools
import hmac
import io
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from urllib.parse import urlencode

from pydantic import BaseModel
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import Response

from models import documents as docs
from opx import settings, store
from opx.api.parameters import (DEFAULT_LIMIT, INGEST_PARAMS, MAX_LIMIT, Param, filter_params,
                                ingest_params, page_params, run_id_param)
from opx.api.problems import ApiError, from_opx, problem_response, unexpected
from opx.errors import BadParameter, OpxError
from opx.links import PAGES
from opx.publish import export
from opx.publish.brief import BRIEF_PAGES
from opx.publish.render import EXPORTABLE_PAGES

PREFIX = "/api/v1"
PAGE_PATHS = {name: path for path, name in PAGES.items() if name in EXPORTABLE_PAGES}
FILE_FORMATS = tuple(f for f in export.FORMATS if f != "json")
@dataclass(frozen=True)
class Endpoint:
    method: str
    path: str                       # a Starlette path: `/api/v1/runs/{id}`
    summary: str
    handle: Callable[[Request], Awaitable[Response]]
    params: tuple[Param, ...] = ()
    ok: type[BaseModel] | None = None           # the 200 JSON body
    ok_media: tuple[str, ...] = ()              # or files of these types
    errors: tuple[int, ...] = (400,)
    writes: bool = False
    body: bool = False
    tag: str = "answers"
    extra: dict = field(default_factory=dict)


@functools.lru_cache(maxsize=1)
def catalog():
    from opx.catalog import load_catalog
    return load_catalog()


def database():
    from opx.config import db_path
    return db_path()


# At most this many API requests are worked on at once; the others wait their turn. Python runs
# one thread at a time, so more workers only share the same time more thinly, and a browser
# session's script run (a thread like them) would wait behind every one (bench/bench_api.py).
API_WORKERS = 4
_limiter: list = []


def _workers():
    import anyio
    if not _limiter:
        _limiter.append(anyio.CapacityLimiter(API_WORKERS))
    return _limiter[0]


def answering(fn: Callable[..., Response]) -> Callable[[Request], Awaitable[Response]]:
    """A blocking handler run in a worker thread, with every refusal as problem+json."""
    from anyio import to_thread

    async def endpoint(request: Request) -> Response:
        try:
            if getattr(fn, "reads_body", False):
                body = await read_body(request)
                return await to_thread.run_sync(fn, request, body, limiter=_workers())
            return await to_thread.run_sync(fn, request, limiter=_workers())
        except ApiError as err:
            return problem_response(err)
        except OpxError as exc:
            return problem_response(from_opx(exc))
        except Exception as exc:      # noqa: BLE001  (never a traceback to the client)
            return unexpected(exc)
    return endpoint


def base_of(request: Request) -> str:
    """The address that was asked, scheme://host[:port] (behind a proxy: its Host and
    X-Forwarded-Proto, which uvicorn reads)."""
    host = request.headers.get("host") or request.url.netloc
    return f"{request.url.scheme}://{host}"


def query_pairs(request: Request) -> list[tuple[str, str]]:
    return list(request.query_params.multi_items())


def no_params(request: Request) -> None:
    for name, _ in query_pairs(request):
        raise ApiError(400, f"unknown parameter `{name[:40]}`; this operation takes none", name)


# -- the pages' answers ----------------------------------------------------------------------
def page_handler(page: str, fixed_format: str | None):
    def answer(request: Request) -> Response:
        from opx.publish.document import document
        fmt = fixed_format or request.path_params["format"]
        if fmt not in export.FORMATS or fmt == "json" and fixed_format is None:
            raise ApiError(404, f"no format `{fmt[:40]}`; formats: json (without an extension), "
                                + ", ".join(FILE_FORMATS), "format")
        if export.FORMATS[fmt].kind == "brief" and page not in BRIEF_PAGES:
            raise ApiError(404, f"a brief is made of {', '.join(BRIEF_PAGES)}, not of {page}",
                           "format")
        query = request.url.query
        text = PAGE_PATHS[page] + (f"?{query}" if query else "")
        if fmt == "json":
            data = _json_answer(text, str(database()), base_of(request),
                                store.data_stamp(database()), dt.date.today().isoformat())
        else:
            data = document(text, fmt, database(), catalog(), base_url=base_of(request),
                            strict=True).data
        return Response(data, media_type=export.FORMATS[fmt].mime)
    return answering(answer)


@functools.lru_cache(maxsize=4096)
def _json_answer(text: str, db: str, base: str, stamp: tuple, day: str) -> bytes:
    """A page's JSON answer, kept until the data changes (its stamp) or the day does (the
    document names the day it was made): many programs asking for the same views is the common
    load, and each answer is the same bytes until then. A refusal is never kept."""
    from opx.config import location
    from opx.publish.document import document
    return document(text, "json", location(db), catalog(), base_url=base, strict=True).data


# -- runs ------------------------------------------------------------------------------------
def page_size(raw: str | None) -> int:
    """`limit`: runs per page."""
    raw = str(DEFAULT_LIMIT) if raw is None else raw
    if not raw.strip().isdigit() or not 1 <= int(raw) <= MAX_LIMIT:
        raise BadParameter("limit", f"`{raw[:40]}` is not a whole number between 1 and "
                                    f"{MAX_LIMIT}")
    return int(raw)


def runs_page(given: dict[str, list[str]], limit: int, after: str | None
              ) -> tuple[list[tuple], str | None]:
    """A page of the runs listing (`runs list`'s filters, its order and fields): the rows, and the
    id to list after for the next page (None at the end). `GET /api/v1/runs` and the MCP tool
    `list_runs` both read it."""
    from opx.answers.runs import run_filters
    from opx.store import queries
    with store.reading(database()) as con:
        filters = run_filters(con, catalog(), given)
        if after is not None and not store.run_exists(con, after):
            raise BadParameter("after", f"no run with id `{after[:40]}` to list after")
        rows = queries.runs_listing(con, filters, limit=limit + 1, after=after).fetchall()
    page = rows[:limit]
    return page, (page[-1][0] if len(rows) > limit else None)


def list_runs(request: Request) -> Response:
    from opx.publish import runs_output as out
    from opx.store import queries
    given: dict[str, list[str]] = {}
    for name, value in query_pairs(request):
        given.setdefault(name, []).append(value)
    limit = page_size((given.pop("limit", None) or [None])[-1])
    page, next_after = runs_page(given, limit, (given.pop("after", None) or [None])[-1])
    text = io.StringIO()
    out.write_json_list(text, queries.RUN_LIST_FIELDS, iter(page))
    next_url = None
    if next_after:
        pairs = [(k, v) for k, v in query_pairs(request) if k != "after"] + [("after", next_after)]
        next_url = f"{base_of(request)}{PREFIX}/runs?{urlencode(pairs)}"
    tail = export.strict_json({"limit": limit, "next_after": next_after, "next": next_url},
                              indent=None)
    return Response('{"runs": ' + text.getvalue() + ", " + tail[1:], media_type="application/json")


def show_run(request: Request) -> Response:
    """What `runs show ID --format json` prints."""
    from opx.publish import runs_output as out
    from opx.store import queries
    no_params(request)
    run_id = request.path_params["id"]
    text = io.StringIO()
    with store.reading(database()) as con:
        run = queries.run_fields(con, run_id)
        if run is None:
            raise BadParameter("id", f"no run with id `{run_id[:40]}`", missing=True)
        names = queries.run_point_columns()
        run.pop("points")
        out.write_run_json(run, names, out.batches(queries.run_points(con, run_id, names)), text)
    return Response(text.getvalue(), media_type="application/json")


def coverage_document() -> dict:
    """What the database holds, per model, workload, hardware and provenance (`GET
    /api/v1/coverage` and the MCP tool `coverage`)."""
    from opx.store import queries
    with store.reading(database()) as con:
        return {"coverage": export.finite(queries.coverage_overview(con).to_dict("records"))}


def coverage(request: Request) -> Response:
    no_params(request)
    return Response(export.strict_json(coverage_document(), indent=None),
                    media_type="application/json")


def catalog_document(request: Request) -> Response:
    no_params(request)
    return Response(export.strict_json(catalog().model_dump(mode="json"), indent=None),
                    media_type="application/json")


# -- writes ----------------------------------------------------------------------------------
def require_writer(request: Request) -> None:
    """Writes need `Authorization: Bearer <OPX_ADMIN_TOKEN>`: none given is 401; a wrong one, a
    server without a token, or a read-only server is 403. Nothing is read before this passes."""
    if settings.read_only():
        raise ApiError(403, "this opx is served read-only (OPX_READ_ONLY): nothing can be changed")
    token = settings.admin_token()
    if not token:
        raise ApiError(403, "writes over the API need the admin token: set OPX_ADMIN_TOKEN "
                            "where opx is served, and send it as `Authorization: Bearer <token>`")
    scheme, _, given = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not given.strip():
        raise ApiError(401, "this needs the admin token as `Authorization: Bearer <token>`",
                       headers={"WWW-Authenticate": 'Bearer realm="opx"'})
    if not hmac.compare_digest(given.strip().encode(), token.encode()):
        raise ApiError(403, "the admin token given does not match")


class Upload:
    limit_bytes = 64 * 1024 * 1024          # the pages' limit, set by serve.py from Streamlit's


async def read_body(request: Request) -> bytes:
    """The body, refused with 413 as soon as it passes the upload limit (before it is read
    whole), and only once the writer is known."""
    require_writer(request)
    limit = Upload.limit_bytes
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise ApiError(413, f"the body is {int(declared):,} bytes; the upload limit is "
                            f"{limit:,} bytes (server.maxUploadSize)")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise ApiError(413, f"the body is over the upload limit of {limit:,} bytes "
                                "(server.maxUploadSize)")
        chunks.append(chunk)
    return b"".join(chunks)


def _ingest_options(request: Request):
    from opx.ingest.core import IngestOptions, format_names, parse_meta
    given: dict[str, list[str]] = {}
    names = {n for n, _ in INGEST_PARAMS}
    for name, value in query_pairs(request):
        if name not in names:
            raise ApiError(400, f"unknown parameter `{name[:40]}`; parameters: "
                                + ", ".join(n for n, _ in INGEST_PARAMS), name)
        given.setdefault(name, []).append(value)
    one = {k: v[-1] for k, v in given.items() if k != "meta"}
    if one.get("format") and one["format"] not in format_names():
        raise ApiError(400, f"unknown format `{one['format'][:40]}`; known formats: "
                            + ", ".join(format_names()), "format")
    gpus = one.get("gpus")
    if gpus is not None and not (gpus.isdigit() and int(gpus) > 0):
        raise ApiError(400, f"`{gpus[:40]}` is not a whole number above 0", "gpus")
    try:
        meta = parse_meta(given.get("meta", []))
    except ValueError as exc:
        raise ApiError(400, f"`{str(exc)[:60]}` is not KEY=VALUE", "meta") from None
    options = IngestOptions(format=one.get("format"), hardware=one.get("hardware"),
                            model=one.get("model"), framework=one.get("framework"),
                            precision=one.get("precision"), workload=one.get("workload"),
                            gpus=int(gpus) if gpus else None, meta=meta)
    return options, (one.get("filename") or "upload").strip() or "upload"


def _after_write() -> None:
    """What depends only on the data, made once a write's answer is sent (a Starlette
    background task): the anchored fits, the default overviews, the spread of repeated runs take
    seconds, and a view asked for before they are stored makes its own."""
    from opx.answers import precompute
    precompute.refresh(database(), catalog())


def post_run(request: Request, body: bytes) -> Response:
    from opx.store.importer import changed_data, import_uploads
    options, name = _ingest_options(request)
    if not body:
        raise ApiError(400, "the body is empty: send a result file as the request body", "body")
    results = import_uploads([(name, body)], options, database(), catalog())
    failed = [r for r in results if not r.ok]
    files = [docs.FileImported(file=str(r.path), format=r.format or None, ok=r.ok,
                               runs_added=r.runs_added, points_added=r.points_added,
                               error=r.error, notices=list(r.notices)) for r in results]
    if any(r.store_error for r in failed):
        raise from_opx(next(r.store_error for r in failed if r.store_error))
    if failed:
        raise ApiError(400, failed[0].error or "the file was refused", "body")
    summary = docs.ImportSummary(files=files, runs_added=sum(r.runs_added for r in results),
                                 points_added=sum(r.points_added for r in results))
    return Response(summary.model_dump_json(), media_type="application/json",
                    status_code=201 if summary.runs_added else 200,
                    background=BackgroundTask(_after_write) if changed_data(results) else None)


post_run.reads_body = True      # type: ignore[attr-defined]


def delete_run(request: Request) -> Response:
    require_writer(request)
    no_params(request)
    run_id = request.path_params["id"]
    with store.writing(database()) as con:
        deleted = store.delete_run(con, run_id)
    if not deleted:
        raise BadParameter("id", f"no run with id `{run_id[:40]}`", missing=True)
    return Response(docs.Deleted(deleted=run_id).model_dump_json(), media_type="application/json",
                    background=BackgroundTask(_after_write))


# -- the registry ----------------------------------------------------------------------------
def _endpoints() -> list[Endpoint]:
    out: list[Endpoint] = []
    for page, path in PAGE_PATHS.items():
        where = f"the {page} page (`{path}`)"
        out.append(Endpoint("GET", f"{PREFIX}/{page}", f"The answer {where} shows, as JSON: "
                            f"what `opx export '{path}?...' --format json` writes",
                            page_handler(page, "json"), page_params(page),
                            ok=docs.PAGE_DOCUMENTS[page], errors=(400, 404, 503)))
        formats = [f for f in FILE_FORMATS
                   if export.FORMATS[f].kind != "brief" or page in BRIEF_PAGES]
        out.append(Endpoint(
            "GET", f"{PREFIX}/{page}.{{format}}", f"A file of {where}: the bytes `opx export "
            f"'{path}?...' --format <format>` writes", page_handler(page, None),
            (Param("format", "the export format", {"type": "string", "enum": formats},
                   where="path", required=True), *page_params(page)),
            ok_media=tuple(dict.fromkeys(export.FORMATS[f].mime for f in formats)),
            errors=(400, 404, 503), tag="files"))
    out += [
        Endpoint("GET", f"{PREFIX}/runs", "The stored runs under `runs list`'s filters, newest "
                 "import first, a page at a time", answering(list_runs), filter_params(),
                 ok=docs.RunsPage, errors=(400, 503), tag="runs"),
        Endpoint("POST", f"{PREFIX}/runs", "Import a result file (the body) in any format "
                 "`ingest` reads; needs the admin token", answering(post_run), ingest_params(),
                 ok=docs.ImportSummary, errors=(400, 401, 403, 413, 503), writes=True,
                 body=True, tag="runs"),
        Endpoint("GET", f"{PREFIX}/runs/{{id}}", "One run and its points: what `runs show ID "
                 "--format json` prints", answering(show_run), (run_id_param(),),
                 ok=docs.RunWithPoints, errors=(400, 404, 503), tag="runs"),
        Endpoint("DELETE", f"{PREFIX}/runs/{{id}}", "Delete a run and its points; needs the "
                 "admin token", answering(delete_run), (run_id_param(),), ok=docs.Deleted,
                 errors=(400, 401, 403, 404, 503), writes=True, tag="runs"),
        Endpoint("GET", f"{PREFIX}/coverage", "Per model, workload, hardware and provenance: "
                 "runs, points, and how many points state each statistic over which span",
                 answering(coverage), ok=docs.CoverageDocument, errors=(400, 503), tag="data"),
        Endpoint("GET", f"{PREFIX}/catalog", "The catalog: hardware, models and workloads with "
                 "their sources", answering(catalog_document), errors=(400,), tag="data",
                 extra={"schema": {"type": "object"}}),
    ]
    return out


ENDPOINTS: list[Endpoint] = _endpoints()
