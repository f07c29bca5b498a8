"""The image API (``/image/v2``): image records without bits, Glance's wire format."""
