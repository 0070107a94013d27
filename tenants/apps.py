from django.apps import AppConfig


class TenantsConfig(AppConfig):
    name = "tenants"
    verbose_name = "Tenants (OAuth sign-in)"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from tenants import checks  # noqa: F401  (registers the sign-in system checks)
