"""Where a call's work runs besides the event loop and its threads: a Ray cluster."""
