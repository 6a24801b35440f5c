"""Drives `lspgate mcp` with the official MCP Python SDK (`mcp` from PyPI), for
tests/mcp.rs: connects as the SDK connects by default (it probes `server/discover`,
then falls back to `initialize`), lists the tools, makes the calls it reads as JSON
on stdin (`[{"tool": NAME, "arguments": {...}}, ...]`), and prints one JSON object:
what the connection negotiated, the tool list, and each call's result and progress.

The SDK checks every structured result against its tool's `outputSchema` and raises
when one does not conform: this script then fails, and so does the test.

Usage: python mcp_client.py LSPGATE [ARG...] < calls.json
The server inherits this process's environment and working directory.
"""

import asyncio
import json
import os
import sys

from mcp import Client, StdioServerParameters


async def main() -> None:
    command, *args = sys.argv[1:]
    calls = json.load(sys.stdin)
    server = StdioServerParameters(command=command, args=args, env=dict(os.environ), cwd=os.getcwd())
    transcript: dict = {"calls": []}
    async with Client(server) as client:
        transcript["protocol_version"] = client.protocol_version
        info = client.server_info
        transcript["server_name"] = info.name if info is not None else None
        transcript["instructions"] = client.instructions
        listed = await client.list_tools()
        transcript["tools"] = [tool.model_dump(by_alias=True, mode="json", exclude_none=True) for tool in listed.tools]
        for call in calls:
            progress: list = []

            async def on_progress(value: float, total: float | None, message: str | None) -> None:
                progress.append({"progress": value, "message": message})

            result = await client.call_tool(call["tool"], call["arguments"], progress_callback=on_progress)
            transcript["calls"].append(
                {
                    "tool": call["tool"],
                    "result": result.model_dump(by_alias=True, mode="json", exclude_none=True),
                    "progress": progress,
                }
            )
    json.dump(transcript, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    asyncio.run(main())
