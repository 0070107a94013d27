"""The MCP edge: the only package that knows the wire.

The MCP server built on the SDK (`server`, wiring the `handlers` for tools, resources and
prompts, and the request spans, `spans`), the Streamable HTTP transport at `/mcp` (the `http`
package, `exchange`, `body`), stdio (`stdio`), identity and OAuth (`identity`, `oauth`,
`jwks`), a tenant's terms (`tenancy`), app data and widgets on the wire (`appdata`,
`mcp_apps`), the workflow prompts and reference resources (`prompts`, `resources`) and the
`mcp_stdio` / `mcp_exec` commands. It calls tools through the catalogue's
dispatcher (`tools`) as governance shapes them (`governance`); nothing below it imports it
(docs/adr/0038-three-packages.md).
"""
