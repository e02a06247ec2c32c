#!/usr/bin/env python
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kirocrew_site.settings")
    from django.core.management import execute_from_command_line

    try:
        execute_from_command_line(sys.argv)
    except KeyboardInterrupt:  # Ctrl-C while Django starts: no traceback, the shell's code
        sys.exit(130)


if __name__ == "__main__":
    main()
