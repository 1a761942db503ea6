"""``python -m shoe_ctl.cli``: the ``shoe-ctl`` command line."""

import sys

from shoe_ctl.cli import main

sys.exit(main())
