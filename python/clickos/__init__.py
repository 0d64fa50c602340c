"""Client for the ClickOS daemon (``clickos daemon``).

The daemon owns a fleet of Click instances and serves an HTTP/JSON API on a
UNIX socket. :class:`Client` wraps every operation; errors raise
:class:`ClickOSError` subclasses carrying the daemon's code and message
(:class:`ConfigRefused` also carries the Click-style ``file:line`` lines).

cosmos's verbs are kept as aliases: :meth:`Client.create`,
:meth:`Client.destroy`, :meth:`Client.start`, :meth:`Client.stop`,
:meth:`Client.readh` and :meth:`Client.writeh`.
"""

from .client import (
    Client,
    ClickOSError,
    ConfigRefused,
    NotFound,
    QuotaExceeded,
    Unauthorized,
    Unreachable,
    default_socket,
)

__all__ = [
    "Client",
    "ClickOSError",
    "ConfigRefused",
    "NotFound",
    "QuotaExceeded",
    "Unauthorized",
    "Unreachable",
    "default_socket",
]
__version__ = "0.1.0"
