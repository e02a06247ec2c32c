"""The browser dashboard: server-rendered pages plus one small JS module (static/js/dashboard.js).

``views`` translate requests, ``selectors`` read through the apps' public functions and
``present`` shapes rows for the templates (pure, no Django).
"""
