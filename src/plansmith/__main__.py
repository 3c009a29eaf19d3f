"""``python -m plansmith``: the same as the ``plansmith`` command."""

from plansmith.cli import main

__all__: list[str] = []

if __name__ == "__main__":
    main()
