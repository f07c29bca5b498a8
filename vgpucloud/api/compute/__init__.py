"""The Compute API (``/compute/v2.1``): a wire-compatible subset of OpenStack Nova's."""
