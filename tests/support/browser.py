"""Where the browser tests and the page benchmark find a browser: Debian's chromium."""

CHROMIUM = "/usr/bin/chromium"
"""Debian's chromium (``apt-get install chromium``), for browser tests of the web page."""
CHROMIUM_ARGS = (
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
"""Flags that start it headless without reaching for the network (Playwright's
``chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)``)."""
