"""Placement request handlers, one module per resource. Each is
``(PlacementRequest) -> webob.Response`` and is bound to paths in ``placement.routes``."""
