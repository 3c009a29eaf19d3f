"""The MCP client side: the servers config, the session pool and the MCP invoker (with
plansmith's own face, ``plansmith.mcp``, the only importer of the MCP SDK)."""

from plansmith.servers._config import (
    DEFAULT_MAX_IN_FLIGHT,
    HttpServer,
    InProcessServer,
    ServerConfig,
    ServersConfig,
    StdioServer,
    load_servers,
    parse_servers,
)
from plansmith.servers._dask import DaskPool, classify_dask_error, dask_pool_factory
from plansmith.servers._invoker import McpInvoker, PoolFactory, ToolPool
from plansmith.servers._pool import ServerPool, to_tool_result
from plansmith.servers._survey import STAGES, ServerSurvey, survey_servers, transport_of
from plansmith.servers._warm import DEFAULT_IDLE_TIMEOUT, WarmPools, WarmRun

__all__ = [
    "StdioServer",
    "HttpServer",
    "InProcessServer",
    "ServerConfig",
    "ServersConfig",
    "load_servers",
    "parse_servers",
    "DEFAULT_MAX_IN_FLIGHT",
    "ServerPool",
    "McpInvoker",
    "PoolFactory",
    "ToolPool",
    "to_tool_result",
    # ``plansmith tools``: each server started, its tools listed, how it went
    "ServerSurvey",
    "survey_servers",
    "transport_of",
    "STAGES",
    # servers kept warm between the runs of a long-lived face (serve, mcp)
    "WarmPools",
    "WarmRun",
    "DEFAULT_IDLE_TIMEOUT",
    # the Dask executor's pool (needs the dask extra when it connects)
    "DaskPool",
    "dask_pool_factory",
    "classify_dask_error",
]
