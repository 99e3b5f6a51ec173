"""The web app's bounds, in a module light enough for the command line to import."""

MAX_BODY = 64 * 1024
"""Bytes a POST body may hold."""
HEARTBEAT_SECONDS = 15.0
"""Seconds between two heartbeats of an idle event stream."""
STALL_SECONDS = 30.0
"""Seconds a page may leave its stream unread, with data waiting, before it is disconnected."""
