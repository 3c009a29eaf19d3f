"""A LangGraph agent that delegates a whole plan to plansmith over MCP (stdio).

Runs in ``.venv-lc`` (langgraph, langchain-core, langchain-mcp-adapters 0.3.2 with
mcp 1.x), never in plansmith's own venv: it imports nothing from plansmith. The chat
model is a scripted fake from langchain_core: each turn it reads the last tool
result and makes the next tool call of a fixed script (list the domains, make the
plan, approve it, start the run, poll its status, fetch its report), so the graph,
the tool node and the MCP adapters all run for real, only the LLM is scripted.

    python _lc_agent.py PLANSMITH_EXECUTABLE DOMAIN_DIR HOME TASK

It prints one JSON object: the tools called, in order, and what each stage returned.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import os
import sys
import time
from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_mcp_adapters.tools import load_mcp_tools
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

TERMINAL = {"succeeded", "failed", "cancelled"}
MAX_POLLS = 900
POLL_PAUSE = 0.2  # seconds between status polls, as a real agent would pace them


def _last_result(messages: list[BaseMessage]) -> tuple[str, dict[str, Any]]:
    """The name and structured content of the last tool result."""
    for message in reversed(messages):
        if isinstance(message, ToolMessage):
            artifact = message.artifact or {}
            data = artifact.get("structured_content") if isinstance(artifact, dict) else None
            if data is None or message.status == "error":
                return str(message.name), {"_failed": str(message.content)[:2000]}
            return str(message.name), dict(data)
    return "", {}


class ScriptedChatModel(GenericFakeChatModel):
    """A fake chat model whose next message follows a script over the tool results."""

    domain: str
    task: str
    polls: int = 0

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:
        return self

    def _call(self, tool: str, args: dict[str, Any]) -> AIMessage:
        call_id = f"call-{tool}-{self.polls}-{time.monotonic_ns()}"
        return AIMessage(content="", tool_calls=[{"name": tool, "args": args, "id": call_id}])

    def _next(self, messages: list[BaseMessage]) -> AIMessage:
        tool, data = _last_result(messages)
        if "_failed" in data:
            return AIMessage(content=f"stopped: {tool} failed: {data['_failed']}")
        if not tool:
            return self._call("list_domains", {})
        if tool == "list_domains":
            return self._call("make_plan", {"domain": self.domain, "tasks": [self.task]})
        if tool == "make_plan":
            return self._call("approve_plan", {"plan_hash": data["plan_hash"]})
        if tool == "approve_plan":
            return self._call("start_run", {"plan_hash": data["plan_hash"]})
        if tool in ("start_run", "get_run_status"):
            if data["state"] in TERMINAL:
                return self._call("get_run_report", {"run_id": data["run_id"]})
            self.polls += 1
            if self.polls > MAX_POLLS:
                return AIMessage(content="stopped: the run did not finish")
            if tool == "get_run_status":
                time.sleep(POLL_PAUSE)
            return self._call("get_run_status", {"run_id": data["run_id"]})
        if tool == "get_run_report":
            return AIMessage(content=data["markdown"])
        return AIMessage(content=f"stopped: unexpected tool {tool}")

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._next(messages))])


async def main(plansmith: str, domains: str, home: str, domain: str, task: str) -> None:
    client = MultiServerMCPClient(
        {
            "plansmith": {
                "transport": "stdio",
                "command": plansmith,
                "args": ["mcp", "--domains", domains, "--home", home],
                "env": dict(os.environ),
            }
        }
    )
    async with client.session("plansmith") as session:
        tools = await load_mcp_tools(session)
        model = ScriptedChatModel(messages=iter(()), domain=domain, task=task)

        def agent(state: MessagesState) -> dict[str, list[BaseMessage]]:
            return {"messages": [model.bind_tools(tools).invoke(state["messages"])]}

        graph = StateGraph(MessagesState)
        graph.add_node("agent", agent)
        graph.add_node("tools", ToolNode(tools))
        graph.add_edge(START, "agent")
        graph.add_conditional_edges("agent", tools_condition)
        graph.add_edge("tools", "agent")
        app = graph.compile()
        final = await app.ainvoke(
            {"messages": [("user", f"Run {task} in the {domain} domain and report.")]},
            config={"recursion_limit": 2 * MAX_POLLS + 50},
        )
    messages = final["messages"]
    called = [m.name for m in messages if isinstance(m, ToolMessage)]
    results = {
        str(m.name): (m.artifact or {}).get("structured_content")
        for m in messages
        if isinstance(m, ToolMessage)
    }
    print(
        json.dumps(
            {
                "client_packages": {
                    name: importlib.metadata.version(name)
                    for name in ("mcp", "langchain-mcp-adapters", "langgraph", "langchain-core")
                },
                "tools_available": sorted(t.name for t in tools),
                "tools_called": called,
                "domains": [d["name"] for d in results["list_domains"]["domains"]],
                "plan": results.get("make_plan"),
                "status": results.get("get_run_status") or results.get("start_run"),
                "report": results.get("get_run_report"),
                "final_answer": messages[-1].content,
            }
        )
    )


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:6]))
