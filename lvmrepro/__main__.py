import sys

from lvmrepro.cli import main

sys.exit(main())
