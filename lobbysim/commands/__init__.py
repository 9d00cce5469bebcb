"""What the CLI's commands do, callable from Python: ``run``/``compare``
(:mod:`~lobbysim.commands.run`), ``validate``/``plugins`` (:mod:`~lobbysim.commands.validate`),
``sweep`` (:mod:`~lobbysim.commands.sweep`) and ``paper``
(:mod:`~lobbysim.commands.paper`). Each loads and checks its input, runs an experiment and writes
its output folder atomically; :mod:`lobbysim.cli.main` only parses arguments and prints.
"""
