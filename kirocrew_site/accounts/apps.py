from django.apps import AppConfig


class AccountsConfig(AppConfig):
    """Django's account commands (``createsuperuser``, ``changepassword``) behind the
    project's migrate check. Listed before ``django.contrib.auth``: the first app that
    names a command is the one ``manage.py`` runs."""

    name = "kirocrew_site.accounts"
    label = "accounts"
    verbose_name = "Accounts"
