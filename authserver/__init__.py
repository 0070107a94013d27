"""The built-in OAuth 2.1 authorization server (`OAUTH_BUILTIN`, issue #46, docs/oauth.md)."""
