"""The ``kzo`` command line: one module per subcommand, dispatched by ``cli.main``."""
