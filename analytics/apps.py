from django.apps import AppConfig
from django.conf import settings


class AnalyticsConfig(AppConfig):
    name = "analytics"
    verbose_name = "Analytics"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from analytics import checks  # noqa: F401  (registers the checks)

        if settings.ANALYTICS_LIVE_INGEST:
            from analytics.live import install

            install()
