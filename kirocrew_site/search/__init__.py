"""Full-text search over transcript rows and stored summaries (a derived, rebuildable index).

Subscribes to what transcripts and summaries announce; neither imports it."""
