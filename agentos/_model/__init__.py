"""Talking to a model: the Messages API's wire shapes, the ``Provider`` protocol, scripted
models and the Anthropic backend."""
