"""The exit codes of `totem` and `totem run`, in one place (README: "Exit codes")."""

EXIT_OK = 0  # answered, or the command did what was asked
EXIT_ERROR = 1  # an error: the model's server failed, a command was refused
EXIT_USAGE = 2  # usage or configuration
EXIT_LIMIT = 3  # a limit was reached: step limit, repeated calls, three refusals in a row
EXIT_UNVERIFIED = 4  # the answer claims a change the session did not make
EXIT_ABORTED = 130  # aborted by the user (Ctrl-C)
