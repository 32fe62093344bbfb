"""What every route handler reads from the web app's settings, in a module of its own so
that the handler modules import it and never each other."""

from __future__ import annotations

from .supervisor import CompanionSupervisor

SETTINGS_KEY = "cellmate"


class RelaySettings:
    """What the handlers need, placed in the web app's settings by the extension."""

    def __init__(
        self, supervisor: CompanionSupervisor, version: str, ready_wait: float, max_message_size: int, nodelay: bool = True
    ) -> None:
        self.supervisor = supervisor
        self.version = version
        self.ready_wait = ready_wait
        self.max_message_size = max_message_size
        self.nodelay = nodelay
