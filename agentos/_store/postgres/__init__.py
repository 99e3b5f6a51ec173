"""The PostgreSQL store (``PostgresStore``), for sessions shared by hosts on many machines."""
