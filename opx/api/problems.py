"""Errors a program can read: every refusal is `application/problem+json` (RFC 9457) whose
`detail` is the command line's message, and whose `parameter` names the value at fault."""
from __future__ import annotations

import logging

from starlette.responses import Response

from models.documents import Problem
from opx.errors import BadParameter, OpxError, StoreError, printable
from opx.publish.export import strict_json

MEDIA_TYPE = "application/problem+json"
TITLES = {400: "Bad request", 401: "Unauthorized", 403: "Forbidden", 404: "Not found",
          405: "Method not allowed", 413: "Content too large", 500: "Internal error",
          503: "Service unavailable"}
log = logging.getLogger("opx.api")


class ApiError(Exception):
    def __init__(self, status: int, detail: str, parameter: str | None = None,
                 headers: dict[str, str] | None = None):
        super().__init__(detail)
        self.status, self.detail, self.parameter = status, detail, parameter
        self.headers = headers or {}


def from_opx(exc: OpxError) -> ApiError:
    """The HTTP status of an opx error: a thing that does not exist is 404, a database that
    cannot be read 503, any other refusal 400; the message is the CLI's."""
    if isinstance(exc, BadParameter):
        return ApiError(404 if exc.missing else 400, str(exc), exc.param)
    if isinstance(exc, StoreError):
        return ApiError(503, str(exc))
    return ApiError(400, str(exc), exc.field or None)


def problem_response(err: ApiError) -> Response:
    body = Problem(title=TITLES.get(err.status, "Error"), status=err.status,
                   detail=printable(err.detail), parameter=err.parameter)
    return Response(strict_json(body.model_dump(exclude_none=True), indent=None),
                    status_code=err.status, media_type=MEDIA_TYPE, headers=err.headers)


def unexpected(exc: BaseException) -> Response:
    """A failure opx did not foresee: logged with its traceback here, answered without one."""
    log.exception("opx API: unexpected error", exc_info=exc)
    return problem_response(ApiError(500, f"opx could not answer: {type(exc).__name__}; the "
                                          "server's log has the details"))
