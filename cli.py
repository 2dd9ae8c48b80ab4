"""Thin shim so `python cli.py ...` works from a checkout; the real entry point is `mrfq`."""

from mrfq.cli import main

if __name__ == "__main__":
    main()
