from django.urls import path

from analytics import views
from analytics.metrics import metrics_view

app_name = "analytics"

urlpatterns = [
    path("", views.overview_page, name="overview"),
    path("widgets/", views.dashboard, name="dashboard"),
    path("tool-calls/", views.tool_calls_page, name="tool_calls"),
    path("calls/", views.failing_calls_page, name="failing_calls"),
    path("events/", views.failing_events_page, name="failing_events"),
    path("requests/<str:request_id>/", views.request_page, name="request"),
    path("evidence/", views.evidence_page, name="evidence"),
    path("sessions/<path:session>/", views.session_page, name="session"),  # a key as logged, any text
    path("metrics", metrics_view, name="metrics"),
]
