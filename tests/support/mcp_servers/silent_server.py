"""A server that starts and never answers: it writes its pid to the file named by its first
argument, then reads its stdin and says nothing."""

import os
import sys
from pathlib import Path

Path(sys.argv[1]).write_text(str(os.getpid()))
for _line in sys.stdin:
    pass
