"""``python -m r2act`` runs the command-line interface (signal handlers first, see _startup)."""

from r2act._startup import main

main()
