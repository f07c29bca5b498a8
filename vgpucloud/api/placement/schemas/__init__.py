"""JSON schemas of Placement request bodies, one module per resource, one schema per
microversion range (named ``..._V1_x`` after the version that introduced it)."""
