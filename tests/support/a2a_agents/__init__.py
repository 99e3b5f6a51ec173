"""A2A agents written with the ``a2a-sdk`` (its executor, request handler and Starlette
routes), which the tests serve on loopback (``tests.support.asgi.served``) or run as a
child process."""
