from django.apps import AppConfig


class AuthServerConfig(AppConfig):
    name = "authserver"
    verbose_name = "OAuth authorization server (built-in)"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from authserver import checks  # noqa: F401  (registers the authserver.E0xx system checks)
