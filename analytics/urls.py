from django.urls import path

from analytics import views
from analytics.metrics import metrics_view

app_name = "analytics"

urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("events/", views.failing_events_page, name="failing_events"),
    path("tool-calls/", views.tool_calls_page, name="tool_calls"),
    path("metrics", metrics_view, name="metrics"),
]
