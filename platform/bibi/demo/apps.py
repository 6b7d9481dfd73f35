from django.apps import AppConfig


class DemoConfig(AppConfig):
    name = "bibi.demo"
    label = "demo"
    verbose_name = "Demo"
