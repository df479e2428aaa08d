"""An OpenAI Agents SDK agent (openai-agents, mcp 1.x) with a scripted model (no network) whose
turns call the stdio test server's tools: ok, then tool_error, then slow, which the run's caller
stops waiting for. Knows nothing about OpenTelemetry; the tests run it under ``mcp-otel run``."""

import asyncio
import sys
from typing import Any

from agents import Agent, Runner, set_tracing_disabled
from agents.items import ModelResponse
from agents.mcp import MCPServerStdio
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from tests.harness import REPO_ROOT, env_without_otel

set_tracing_disabled(True)  # the SDK's own tracing would export to OpenAI's servers

SCRIPT = [("ok", "{}"), ("tool_error", "{}"), ("slow", '{"seconds": 5}')]


class ScriptedModel(Model):
    """Calls the next scripted tool each turn, then answers."""

    def __init__(self) -> None:
        self.turn = 0

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        self.turn += 1
        if self.turn <= len(SCRIPT):
            name, arguments = SCRIPT[self.turn - 1]
            call = ResponseFunctionToolCall(
                arguments=arguments,
                call_id=f"call{self.turn}",
                name=name,
                type="function_call",
                id=f"fc{self.turn}",
                status="completed",
            )
            return ModelResponse(output=[call], usage=Usage(), response_id=None)
        text = ResponseOutputText(annotations=[], text="done", type="output_text")
        message = ResponseOutputMessage(id="msg", content=[text], role="assistant", status="completed", type="message")
        return ModelResponse(output=[message], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


async def main() -> None:
    parameters = {
        "command": sys.executable,
        "args": ["-m", "tests.servers.v1_server"],
        "env": env_without_otel(PYTHONPATH=str(REPO_ROOT)),
        "cwd": str(REPO_ROOT),
    }
    async with MCPServerStdio(params=parameters, name="test") as server:
        agent = Agent(name="scripted", instructions="", mcp_servers=[server], model=ScriptedModel())
        try:
            await asyncio.wait_for(Runner.run(agent, "go"), 3.0)
        except asyncio.TimeoutError:
            print("run: gave up waiting", flush=True)


asyncio.run(main())
