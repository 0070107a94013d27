from django.urls import path

from analytics import views

app_name = "analytics"

urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("events/", views.failing_events_page, name="failing_events"),
]
