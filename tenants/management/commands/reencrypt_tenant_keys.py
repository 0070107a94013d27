"""Re-encrypt every stored tenant key under the newest of TENANT_KEY_ENCRYPTION_KEYS."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from tenants import crypto
from tenants.models import TenantKey


class Command(BaseCommand):
    help = "Re-encrypt tenants' TomTom keys under the first TENANT_KEY_ENCRYPTION_KEYS entry (after adding a new one)."

    def handle(self, *args: Any, **options: Any) -> None:
        done = 0
        with transaction.atomic():
            for key in TenantKey.objects.select_for_update().only("id", "secret"):
                try:
                    key.secret = crypto.reencrypt(key.secret)
                except crypto.InvalidToken:
                    raise CommandError(
                        f"Key {key.pk} cannot be opened with any of TENANT_KEY_ENCRYPTION_KEYS; nothing was changed."
                    ) from None
                key.save(update_fields=["secret"])
                done += 1
        self.stdout.write(f"Re-encrypted {done} key(s) under the newest encryption key.")
