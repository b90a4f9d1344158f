"""The one server: the dashboard (app.py), the JSON API at /api/v1 and the MCP server at /mcp on
one port, as Streamlit's own ASGI app (`st.App`, run by uvicorn). `python -m opx serve` and
`make run` start it (`streamlit run serve.py` finds `app` here)."""
from contextlib import asynccontextmanager
from pathlib import Path

import streamlit as st
from starlette.routing import Mount

from opx.api import endpoints, openapi, tools

HERE = Path(__file__).resolve().parent
# The pages' upload limit (server.maxUploadSize, MB) is the API's too.
endpoints.Upload.limit_bytes = int(st.get_option("server.maxUploadSize")) * 1024 * 1024
mcp_route, mcp_sessions = tools.http_route()


@asynccontextmanager
async def lifespan(_app):
    async with mcp_sessions():           # the MCP transport's task group lives with the server
        yield


app = st.App(HERE / "app.py", routes=[Mount(endpoints.PREFIX, app=openapi.api_app()), mcp_route],
             lifespan=lifespan)
