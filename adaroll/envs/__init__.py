"""Environments. Importing this package registers the built-in ones."""
