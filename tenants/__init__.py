"""Tenants: the organisations that sign in with OAuth, their TomTom keys and quotas (docs/oauth.md)."""
