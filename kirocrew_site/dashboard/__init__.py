"""The browser dashboard: server-rendered pages plus small JS modules (static/js/)."""
