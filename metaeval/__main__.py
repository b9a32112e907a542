"""``python -m metaeval`` runs the command line."""

from metaeval.cli import main

main()
