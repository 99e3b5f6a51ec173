"""``python -m agentos.demo``: run the demo."""

from agentos.demo.story import main

main()
