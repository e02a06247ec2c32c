"""The realtime layer's pure parts: no Django, no Channels (tests on ``tmp_path`` alone)."""
