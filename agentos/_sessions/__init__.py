"""The async shell around a turn machine: ``Session``, its task, what it asks of the
runtime and the model, the system toolbox, continuation tokens."""
