"""``python -m toolkit``: the same command line as the ``toolkit`` console script."""

from toolkit.cli import main

if __name__ == "__main__":
    main()
