"""The message board: the board as data, its rendering for the model, its chat
projection for the person, and the board turn machine. Sans-IO, like ``_turns``."""
