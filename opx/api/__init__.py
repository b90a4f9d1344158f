"""opx.api: answers for programs: the JSON API under /api/v1, its OpenAPI schema, and the MCP tools.
May import everything in opx below the CLI (publish, answers, store, ...); only the CLI and serve.py import it."""
