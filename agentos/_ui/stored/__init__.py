"""What the store says of a session no process here runs: its calls, merged with the live mirror.

The command line reads sessions this way, and the web page shows a session it
does not hold this way: read only, no lease taken.
"""
