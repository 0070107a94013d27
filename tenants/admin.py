"""Tenants in the admin: staff add, disable and limit tenants and add or retire their TomTom keys.

A key is typed once into a password field and saved encrypted; afterwards the admin shows only
its label and fingerprint. Rotating a key: add the new one (the newest active key is used from
the next request on, on every replica), then untick *active* on the old one.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import Count, Q, QuerySet
from django.http import HttpRequest, HttpResponse
from django.urls import NoReverseMatch, reverse
from django.utils.html import format_html

from tenants.models import Tenant, TenantKey, TenantMember, TenantUsage
from tenants.tool_names import allow_list_problems

MAX_KEY_LENGTH = 200


class TenantKeyForm(forms.ModelForm):
    new_key = forms.CharField(
        label="TomTom key",
        required=False,
        max_length=MAX_KEY_LENGTH,
        strip=True,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
        help_text="Shown never again once saved. Leave empty to keep the stored key.",
    )

    class Meta:
        model = TenantKey
        fields = ("label", "new_key", "active")

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        if self.instance.pk is None and not data.get("new_key") and self.has_changed():
            self.add_error("new_key", "Type the TomTom key to add.")
        return data

    def save(self, commit: bool = True) -> TenantKey:
        key = self.cleaned_data.get("new_key")
        if key:
            self.instance.set_key(key)
        return super().save(commit)


class TenantKeyInline(admin.TabularInline):
    model = TenantKey
    form = TenantKeyForm
    extra = 1
    readonly_fields = ("fingerprint", "created_at")
    fields = ("label", "new_key", "fingerprint", "active", "created_at")


class TenantMemberInline(admin.TabularInline):
    """The people who act as this tenant when they sign in through the built-in authorization
    server (OAUTH_BUILTIN): a person belongs to one tenant at most. Removing a person here stops
    new sign-ins; their existing grants are refused at the next token refresh, and can be
    revoked at once under *Grants*."""

    model = TenantMember
    extra = 1
    autocomplete_fields = ("user",)
    readonly_fields = ("grants", "created_at")
    fields = ("user", "grants", "created_at")
    verbose_name = "person signing in (built-in OAuth)"
    verbose_name_plural = "people signing in (built-in OAuth)"

    @admin.display(description="grants")
    def grants(self, member: TenantMember) -> Any:
        """A link to this person's grants (the authorization server's admin, by URL)."""
        if member.pk is None:
            return "-"
        try:
            url = reverse("admin:authserver_grant_changelist")
        except NoReverseMatch:
            return "-"
        return format_html('<a href="{}?user__id__exact={}">their grants</a>', url, member.user_id)


class ToolListField(forms.CharField):
    def prepare_value(self, value: Any) -> Any:
        return ", ".join(value) if isinstance(value, list) else value

    # A CharField (its parsing and null-character check) whose value is the list the text names.
    def to_python(self, value: Any) -> list[str]:  # type: ignore[override]
        text = super().to_python(value) or ""
        return [name for name in text.replace(",", " ").split() if name]


class TenantForm(forms.ModelForm):
    allowed_tools = ToolListField(
        required=False,
        help_text="Tool names, comma- or space-separated; empty: every tool. Only tools the server offers: a "
        "retired name or an alias is refused, with the tool to allow instead.",
    )

    class Meta:
        model = Tenant
        fields = ("name", "claim", "enabled", "default_backend", "allowed_tools", "calls_per_minute", "calls_per_day")

    def clean_allowed_tools(self) -> list[str]:
        names = list(dict.fromkeys(self.cleaned_data["allowed_tools"]))
        problems = allow_list_problems(names)
        if problems:
            raise ValidationError(problems)
        return names


@admin.register(Tenant)
class TenantAdmin(admin.ModelAdmin):
    form = TenantForm
    inlines = [TenantKeyInline, TenantMemberInline]
    list_display = ("name", "claim", "enabled", "active_keys", "calls_per_minute", "calls_per_day", "updated_at")
    list_filter = ("enabled",)
    search_fields = ("name", "claim")
    actions = ["disable", "enable"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Tenant]:
        return super().get_queryset(request).annotate(active_key_count=Count("keys", filter=Q(keys__active=True)))

    @admin.display(description="active keys", ordering="active_key_count")
    def active_keys(self, tenant: Tenant) -> Any:
        count = getattr(tenant, "active_key_count", None)
        count = tenant.keys.filter(active=True).count() if count is None else count
        if tenant.enabled and not count:
            return format_html('<strong class="tenant-no-key">{}</strong>', "0: enabled without a key")
        return count

    def change_view(
        self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        """An enabled tenant without an active key is warned about on its page (tenants.W002)."""
        tenant = self.get_object(request, object_id)
        if request.method == "GET" and tenant is not None and keyless(tenant):
            self.message_user(request, keyless_text(tenant), messages.WARNING)
        return super().change_view(request, object_id, form_url, extra_context)

    def response_add(self, request: HttpRequest, obj: Tenant, post_url_continue: str | None = None) -> HttpResponse:
        if keyless(obj):
            self.message_user(request, keyless_text(obj), messages.WARNING)
        return super().response_add(request, obj, post_url_continue)

    def response_change(self, request: HttpRequest, obj: Tenant) -> HttpResponse:
        if keyless(obj):
            self.message_user(request, keyless_text(obj), messages.WARNING)
        return super().response_change(request, obj)

    @admin.action(description="Disable the selected tenants (refused from their next request)")
    def disable(self, request: HttpRequest, queryset: QuerySet[Tenant]) -> None:
        count = queryset.update(enabled=False)
        self.message_user(request, f"Disabled {count} tenant(s).", messages.SUCCESS)

    @admin.action(description="Enable the selected tenants")
    def enable(self, request: HttpRequest, queryset: QuerySet[Tenant]) -> None:
        count = queryset.update(enabled=True)
        self.message_user(request, f"Enabled {count} tenant(s).", messages.SUCCESS)


def keyless(tenant: Tenant) -> bool:
    """An enabled tenant with no active TomTom key: every tool call it makes is refused."""
    return tenant.enabled and not tenant.keys.filter(active=True).exists()


def keyless_text(tenant: Tenant) -> str:
    return (
        f"{tenant.name} is enabled but has no active TomTom key: every tool call it makes is refused "
        "`unauthorized` (check tenants.W002). Add its key under TomTom keys below, or untick enabled."
    )


@admin.register(TenantUsage)
class TenantUsageAdmin(admin.ModelAdmin):
    """The quota counters, read-only (the server writes them)."""

    list_display = ("tenant", "minute_calls", "day_calls")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
