"""Settings shared by every process (never imported by domain/ or workflows/)."""

from config.settings import Settings, get_settings

__all__ = ["Settings", "get_settings"]
