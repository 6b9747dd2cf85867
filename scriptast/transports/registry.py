"""The transports by name: one line a transport. A job_spec.json names its transport; run makes
it here, given the host an ssh transport needs."""

from __future__ import annotations

from collections.abc import Callable

from scriptast.contract.axes import LOCAL, SSH
from scriptast.contract.transport import Transport
from scriptast.errors import InputError
from scriptast.transports.local import LocalTransport
from scriptast.transports.ssh import SshTransport

Maker = Callable[[str | None, str | None], Transport]
"""Makes a transport from a host and an ssh config file (a local one needs neither)."""

TRANSPORTS: dict[str, Maker] = {}


def register(name: str, maker: Maker) -> None:
    """Add a transport under `name` (which must be new)."""
    if name in TRANSPORTS:
        raise ValueError(f"a transport named {name!r} is registered already")
    TRANSPORTS[name] = maker


def _local(host: str | None, config: str | None) -> Transport:
    return LocalTransport()


def _ssh(host: str | None, config: str | None) -> Transport:
    return SshTransport(host or "", config)


register(LOCAL, _local)
register(SSH, _ssh)


def transport(name: str, host: str | None = None, config: str | None = None) -> Transport:
    """The transport `name`, reaching `host`."""
    maker = TRANSPORTS.get(name)
    if maker is None:
        raise InputError(f"no transport {name!r}; known: {', '.join(TRANSPORTS)}")
    return maker(host, config)
