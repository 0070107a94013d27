"""The closed set of error codes a tool call can end with.

A tool raises `ToolError(code, message, **data)` for anything a caller can act on. The catalog
turns it into one JSON shape, `{"error": {"code", "message", ...data}}`, on every transport.
Any other exception is logged with a request id and answered as `internal` without details.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class ErrorCode(StrEnum):
    INVALID_ARGUMENTS = "invalid_arguments"
    """The call's arguments are wrong; the message names the argument."""
    UNKNOWN_TOOL = "unknown_tool"
    """No tool has that name; `tools` lists the valid names, `closest` the one most like it (when
    one is alike: the message asks "Did you mean ...?")."""
    RETIRED = "retired"
    """The tool was retired; `replaced_by` lists the tools to call instead."""
    UNAUTHORIZED = "unauthorized"
    """No TomTom key was given, or TomTom refused it."""
    UNSUPPORTED = "unsupported"
    """The request is valid but this backend or server cannot do it."""
    UNAVAILABLE = "unavailable"
    """TomTom could not be reached or failed; trying later may help."""
    RETRY_LATER = "retry_later"
    """Rate limited; `retry_after` says how many seconds to wait."""
    MALFORMED = "malformed"
    """TomTom answered with data we cannot read."""
    INTERNAL = "internal"
    """A bug on our side; the log has the details under `request_id`."""


CALLER_MISTAKES: tuple[ErrorCode, ...] = (
    ErrorCode.INVALID_ARGUMENTS,
    ErrorCode.UNKNOWN_TOOL,
    ErrorCode.RETIRED,
    ErrorCode.UNSUPPORTED,
    ErrorCode.UNAUTHORIZED,
)
"""Whose error it is, said once: the codes only the caller can fix (its arguments, tool name or
backend, or its TomTom key: none given, or refused). The dashboards count them apart from server
errors, and the alerting rules ticket them instead of paging (deploy/prometheus)."""
UPSTREAM_FAILURES: tuple[ErrorCode, ...] = (ErrorCode.UNAVAILABLE, ErrorCode.RETRY_LATER, ErrorCode.MALFORMED)
"""The codes TomTom causes (unreachable or failing, rate limiting, an answer we cannot read): one
fleet-wide alert, not one per host. Every other code (`internal`) is ours."""


class ToolError(Exception):
    """An expected failure, answered to the caller as a tool error."""

    def __init__(self, code: ErrorCode, message: str, **data: Any) -> None:
        super().__init__(message)
        self.code = ErrorCode(code)
        self.message = message
        self.data = data

    def as_dict(self) -> dict[str, Any]:
        return {"error": {"code": self.code.value, "message": self.message, **self.data}}


def invalid(argument: str, message: str) -> ToolError:
    """An `invalid_arguments` error naming the argument (a path such as `locations[1]`)."""
    return ToolError(ErrorCode.INVALID_ARGUMENTS, f"{argument}: {message}", argument=argument)


def conflicting(*arguments: str, message: str) -> ToolError:
    """An `invalid_arguments` error for a rule between inputs; names every input involved."""
    names = " and ".join(f"`{name}`" for name in arguments)
    return ToolError(ErrorCode.INVALID_ARGUMENTS, f"{names}: {message}", arguments=list(arguments))
