from django.apps import AppConfig


class AccountsConfig(AppConfig):
    """``createsuperuser`` and ``changepassword`` behind the migrate check (listed before
    ``django.contrib.auth``: the first app that names a command is the one that runs)."""

    name = "kirocrew_site.accounts"
    label = "accounts"
    verbose_name = "Accounts"
