"""Tenants' TomTom keys, encrypted at rest with Fernet (AES-128-CBC + HMAC-SHA256).

The encryption keys come from `TENANT_KEY_ENCRYPTION_KEYS`, newest first, through a
`MultiFernet`: the first encrypts, every one decrypts. Rotating the encryption key is adding a
new one in front, running `python manage.py reencrypt_tenant_keys` (every stored key is then
under the newest), and dropping the old one: no key is lost on the way. Unset, one key is
derived from `DJANGO_SECRET_KEY` (development; `check --deploy` flags it as tenants.W001).
"""

from __future__ import annotations

import base64
import functools
import hashlib

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings

__all__ = ["InvalidToken", "decrypt", "encrypt", "fingerprint", "reencrypt"]


def derived_key(secret: str) -> bytes:
    """A Fernet key derived from Django's secret, for development only."""
    return base64.urlsafe_b64encode(hashlib.sha256(b"tenants.crypto:" + secret.encode()).digest())


@functools.cache
def _fernet(keys: tuple[str, ...], secret_key: str) -> MultiFernet:
    return MultiFernet([Fernet(key) for key in keys] if keys else [Fernet(derived_key(secret_key))])


def fernet() -> MultiFernet:
    return _fernet(tuple(settings.TENANT_KEY_ENCRYPTION_KEYS), settings.SECRET_KEY)


def encrypt(plain: str) -> str:
    return fernet().encrypt(plain.encode()).decode("ascii")


def decrypt(token: str) -> str:
    """The plain key; raises `InvalidToken` when no configured encryption key opens it."""
    return fernet().decrypt(token.encode("ascii")).decode()


def reencrypt(token: str) -> str:
    """`token` under the newest encryption key (MultiFernet.rotate)."""
    return fernet().rotate(token.encode("ascii")).decode("ascii")


def fingerprint(plain: str) -> str:
    """What the admin shows of a key once saved: 12 hex digits of its SHA-256, never the key."""
    return hashlib.sha256(plain.encode()).hexdigest()[:12]
