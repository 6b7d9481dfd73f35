"""The organizers' audit log."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from bibi.sharedtasks.models.tasks import SharedTask


class AuditLogEntry(models.Model):
    """What an organizer did, when, to what. Written by services, never edited."""

    shared_task = models.ForeignKey(SharedTask, on_delete=models.CASCADE, related_name="audit_log")
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    action = models.CharField(max_length=60)
    target = models.CharField(
        max_length=200, help_text="What the action was done to, e.g. 'phase:break'."
    )
    details = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "audit log entries"

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.actor}: {self.action} {self.target}"
