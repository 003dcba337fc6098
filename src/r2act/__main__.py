"""``python -m r2act`` runs the command-line interface."""

from r2act.cli import main

main()
