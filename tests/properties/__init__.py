"""Property registry of the public API: one entry per public function (tests/test_properties.py)."""
