"""The MCP client: tools from Model Context Protocol servers, offered as Seam tools.

`McpServers` (servers.py) is a `ToolSource`: each configured server (`ServerSpec`) is
started on first use, its tools listed once and offered as `mcp__<server>__<tool>`;
`McpTool` (tools.py) runs a call with its timeout, asks for approval where the server's
`approval` says so, and turns the result into text. Schemas from servers are
`ForeignSchema`s, checked by `InterpretingValidator` (schema.py), never compiled.
"""
