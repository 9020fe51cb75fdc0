# Root conftest: makes the in-tree package importable when pytest runs from a checkout.
