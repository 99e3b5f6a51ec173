"""Where sessions outlive the process: the ``SessionStore`` protocol and its backends."""
