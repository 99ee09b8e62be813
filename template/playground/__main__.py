"""`python -m playground` (`make playground`): see playground/server.py."""

import sys

from playground.server import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
