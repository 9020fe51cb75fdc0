"""Verify checks of spec ``uniformity`` (a package so that its module names do not clash with tests/)."""
