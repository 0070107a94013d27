"""The admin: host families (editable), and the index links to the analytics dashboards
(templates/admin/analytics_index.html)."""

from django.contrib import admin

from analytics.models import HostFamily

admin.site.index_template = "admin/analytics_index.html"


@admin.register(HostFamily)
class HostFamilyAdmin(admin.ModelAdmin):
    """A pattern that is not a valid regular expression is refused with the reason
    (`HostFamily.clean`)."""

    list_display = ("name", "pattern", "position", "description")
    list_editable = ("position",)
    search_fields = ("name", "pattern")
    ordering = ("position", "name")
