"""The admin index links to the analytics dashboard (templates/admin/analytics_index.html)."""

from django.contrib import admin

admin.site.index_template = "admin/analytics_index.html"
