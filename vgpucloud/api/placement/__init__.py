"""The Placement API (OpenStack Placement microversions 1.0-1.39) over ``PlacementStore``."""
