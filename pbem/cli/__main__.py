"""``python -m pbem.cli``: the same as the ``pbem`` script."""

from pbem.cli import main

main()
