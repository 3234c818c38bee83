import sys

from localeval.cli import main

sys.exit(main())
