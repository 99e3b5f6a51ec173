"""The store's tables written once, in SQL both backends speak, against a ``Database``."""
