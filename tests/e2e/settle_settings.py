"""The site's settings with a long summary settle, for the processes of
``test_summary_settle.py`` (the settle is not read from the environment)."""

from kirocrew_site.settings import *  # noqa: F403

# Far longer than the test's three turns take: each turn end's pass is still waiting
# when the next turn ends, whatever the machine's load.
KIROCREW_SUMMARY_SETTLE = 20.0
