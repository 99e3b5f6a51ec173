"""The front ends: the command line, the web page and the terminal UI, with what they share."""
