"""The API as one ASGI app (mounted at /api/v1 by serve.py) and its OpenAPI 3.1 schema, both made
from `opx.api.endpoints.ENDPOINTS`; the bodies' schemas are the pydantic models' own
(`models.documents`)."""
from __future__ import annotations

import functools

from pydantic.json_schema import models_json_schema
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from models import documents as docs
from opx import __version__
from opx.api.endpoints import ENDPOINTS, PREFIX, Endpoint
from opx.api.problems import MEDIA_TYPE, TITLES, ApiError, problem_response
from opx.publish.export import strict_json

REF = "#/components/schemas/{model}"


def _parameter(p) -> dict:
    out = {"name": p.name, "in": p.where, "description": p.description,
           "required": p.required or p.where == "path", "schema": p.schema}
    if p.repeatable:
        out.update(style="form", explode=True)
    return out


def _responses(e: Endpoint) -> dict:
    out: dict = {}
    if e.ok is not None:
        out["200"] = {"description": "the answer",
                      "content": {"application/json": {"schema": {"$ref": REF.format(
                          model=e.ok.__name__)}}}}
        if e.method == "POST":
            out["201"] = {**out["200"], "description": "imported: runs were added"}
    elif e.ok_media:
        out["200"] = {"description": "the file",
                      "content": {m: {"schema": {"type": "object"} if m == "application/json"
                                      else {"type": "string", "format": "binary"}}
                                  for m in e.ok_media}}
    else:
        out["200"] = {"description": "the answer",
                      "content": {"application/json": {"schema": e.extra.get("schema", {})}}}
    problem = {"content": {MEDIA_TYPE: {"schema": {"$ref": REF.format(model="Problem")}}}}
    for status in e.errors:
        out[str(status)] = {"description": TITLES[status], **problem}
    return out


@functools.lru_cache(maxsize=1)
def openapi() -> dict:
    models = {docs.Problem, *(e.ok for e in ENDPOINTS if e.ok is not None)}
    _, schemas = models_json_schema([(m, "serialization") for m in
                                     sorted(models, key=lambda m: m.__name__)],
                                    ref_template=REF)
    paths: dict = {}
    for e in ENDPOINTS:
        op = {"summary": e.summary, "operationId": _operation_id(e), "tags": [e.tag],
              "parameters": [_parameter(p) for p in e.params], "responses": _responses(e)}
        if e.body:
            op["requestBody"] = {"required": True, "description": "a result file, as it was "
                                 "written", "content": {"application/octet-stream": {
                                     "schema": {"type": "string", "format": "binary"}}}}
        if e.writes:
            op["security"] = [{"adminToken": []}]
        paths.setdefault(e.path, {})[e.method.lower()] = op
    return {
        "openapi": "3.1.0",
        "info": {"title": "opx: the operating-point explorer", "version": __version__,
                 "description": "Every page's answer as JSON or a file, the stored runs, and "
                                "imports (docs/api.md)."},
        "paths": paths,
        "components": {"schemas": schemas.get("$defs", {}),
                       "securitySchemes": {"adminToken": {
                           "type": "http", "scheme": "bearer",
                           "description": "the server's OPX_ADMIN_TOKEN"}}},
    }


def _operation_id(e: Endpoint) -> str:
    words = e.path.removeprefix(PREFIX + "/").replace("{format}", "file").replace("{id}", "one")
    return e.method.lower() + "_" + "".join(c if c.isalnum() else "_" for c in words)


async def _schema(request: Request) -> Response:
    for name, _ in request.query_params.multi_items():
        return problem_response(ApiError(400, f"unknown parameter `{name[:40]}`", name))
    return Response(strict_json(openapi(), indent=None), media_type="application/json")


async def _http_error(request: Request, exc: Exception) -> Response:
    status = getattr(exc, "status_code", 500)
    detail = (f"no operation at {request.url.path}; the operations are listed at "
              f"{PREFIX}/openapi.json" if status == 404 else
              f"{request.method} is not an operation of {request.url.path}" if status == 405
              else str(getattr(exc, "detail", exc)))
    return problem_response(ApiError(status, detail, headers=dict(getattr(exc, "headers", None)
                                                                   or {})))


def api_app() -> Starlette:
    """/api/v1 as an ASGI app: every operation, the schema, and problem+json for a path or a
    method that is none of them."""
    routes = [Route(e.path.removeprefix(PREFIX), e.handle, methods=[e.method]) for e in ENDPOINTS]
    routes.append(Route("/openapi.json", _schema, methods=["GET"]))
    return Starlette(routes=routes, exception_handlers={HTTPException: _http_error})
