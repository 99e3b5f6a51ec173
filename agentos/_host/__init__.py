"""Many sessions on one runtime: leases in the store, the live mirror of calls, idle
unloading, resume."""
