"""Runnable examples: ``python -m tensorflow_pdk.examples.digits``."""
