"""The internal API agents talk to (``/internal/v1``): hosts, heartbeats and host tasks.

``ports`` holds the values and the store protocol (pure), ``service`` the WSGI app the
app factory mounts. Importing this package imports neither HTTP nor SQL.
"""
