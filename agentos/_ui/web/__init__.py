"""The live web page (``agentos serve``): the ASGI app, its event feed, the page's JSON."""
