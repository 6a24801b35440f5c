"""The demo's command line: `python -m app.cli NAME`."""

import sys

from lib.greeting import greet


def main(argv: list[str]) -> int:
    name = argv[1] if len(argv) > 1 else "world"
    print(greet(name))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
