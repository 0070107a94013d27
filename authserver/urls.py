"""The authorization server's routes (included at the site root by tomtom_mcp/urls.py)."""

from django.contrib.auth import views as auth_views
from django.urls import path

from authserver import views

urlpatterns = [
    path(".well-known/oauth-authorization-server", views.metadata_view, name="oauth-metadata"),
    path("oauth/authorize", views.authorize_view, name="oauth-authorize"),
    path("oauth/token", views.token_view, name="oauth-token"),
    path("oauth/register", views.register_view, name="oauth-register"),
    path("oauth/revoke", views.revoke_view, name="oauth-revoke"),
    path(
        "oauth/login",
        views.builtin_only(views.LoginView.as_view()),
        name="oauth-login",
    ),
    path("oauth/logout", views.builtin_only(auth_views.LogoutView.as_view()), name="oauth-logout"),
]
