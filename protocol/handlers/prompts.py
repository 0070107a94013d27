"""`prompts/list` and `prompts/get`: the workflow prompts (protocol.prompts), each offered only
to callers offered the tools it needs."""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

from protocol.handlers.callers import Callers
from protocol.prompts import PromptArgumentError, offered_prompts


class PromptHandlers:
    __slots__ = ("callers",)

    def __init__(self, callers: Callers) -> None:
        self.callers = callers

    async def list_prompts(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        _, offered = await self.callers.offered_tools(ctx)
        return types.ListPromptsResult(
            prompts=[
                types.Prompt(
                    name=p.name,
                    title=p.title,
                    description=p.description,
                    arguments=[
                        types.PromptArgument(name=a.name, description=a.description, required=a.required)
                        for a in p.arguments
                    ],
                )
                for p in offered_prompts(offered)
            ]
        )

    async def get_prompt(
        self, ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        _, offered = await self.callers.offered_tools(ctx)
        prompts = {prompt.name: prompt for prompt in offered_prompts(offered)}
        prompt = prompts.get(params.name)
        if prompt is None:
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=f"Unknown prompt {params.name[:128]!r}; known: {', '.join(prompts) or 'none'}",
                data={"prompts": list(prompts)},
            )
        try:
            text = prompt.text(params.arguments, offered)
        except PromptArgumentError as error:
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=f"Invalid arguments for {prompt.name}: {error}",
                data={"prompt": prompt.name},
            ) from None
        message = types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))
        return types.GetPromptResult(description=prompt.description, messages=[message])
