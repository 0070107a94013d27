from django.apps import AppConfig


class AnalyticsConfig(AppConfig):
    name = "analytics"
    verbose_name = "App-status analytics"
    default_auto_field = "django.db.models.BigAutoField"
