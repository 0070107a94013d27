"""The one error the authorization server raises: an OAuth error code from a closed set.

Codes are those of RFC 6749 §4.1.2.1 (authorize) and §5.2 (token), RFC 7009 §2.2.1, RFC 7591
§3.2.2 (registration) and RFC 8707 §2 (`invalid_target`). A view turns the error into a JSON
body (token, registration, revocation), a redirect to the client's verified redirect URI
(authorize, once the client and its redirect are known good) or a page shown to the person.
"""

from __future__ import annotations

from typing import Final

CODES: Final = frozenset(
    {
        "invalid_request",
        "invalid_client",
        "invalid_grant",
        "unauthorized_client",
        "unsupported_grant_type",
        "unsupported_response_type",
        "invalid_scope",
        "access_denied",
        "server_error",
        "temporarily_unavailable",
        "unsupported_token_type",
        "invalid_redirect_uri",
        "invalid_client_metadata",
        "invalid_target",
    }
)
DESCRIPTION_LENGTH = 300


class OAuthError(Exception):
    """An OAuth error: `error` from `CODES`, a human `description` (never a token, code or
    secret), and the HTTP status to answer with (400 unless said otherwise)."""

    def __init__(self, error: str, description: str, status: int = 400) -> None:
        if error not in CODES:
            raise ValueError(f"unknown OAuth error code {error!r}")
        super().__init__(f"{error}: {description}")
        self.error = error
        self.description = description[:DESCRIPTION_LENGTH]
        self.status = status

    def as_dict(self) -> dict[str, str]:
        return {"error": self.error, "error_description": self.description}
