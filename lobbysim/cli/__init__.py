"""The ``lobbysim`` command line: the parser and its dispatch (:mod:`lobbysim.cli.main`), the
options the subcommands share (:mod:`lobbysim.cli.options`) and the study subcommands
(:mod:`lobbysim.cli.studies`). Each subcommand's work is in :mod:`lobbysim.commands`.
"""
