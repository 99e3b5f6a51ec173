"""The web app's bounds, in a module light enough for the command line to import."""

MAX_BODY = 64 * 1024
"""Bytes a POST body may hold."""
HEARTBEAT_SECONDS = 15.0
"""Seconds between two heartbeats of an idle event stream."""
STALL_SECONDS = 30.0
"""Seconds a page may leave its stream unread, with data waiting, before it is disconnected."""
PIECE_BYTES = 16 * 1024
"""Bytes an event stream sends at once: a bigger frame (the snapshot of a long chat) goes in
pieces, so a page that stops reading holds at most one piece beyond its socket's buffers."""
