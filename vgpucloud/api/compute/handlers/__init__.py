"""Compute API handlers, one module per resource: ``(ComputeRequest) -> webob.Response``."""
