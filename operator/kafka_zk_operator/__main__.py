"""``python -m kafka_zk_operator`` is the ``kzo`` command."""

import sys

from kafka_zk_operator.cli.main import main

sys.exit(main())
