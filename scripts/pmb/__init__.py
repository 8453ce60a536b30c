"""pmb - host-side tools for pmubench: boot under QEMU, parse serial logs, report, track history.

Standard library only, except matplotlib for plots (imported lazily by pmb.plots).
"""
import os

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _read_version():
    try:
        with open(os.path.join(_ROOT, "VERSION"), encoding="utf-8") as f:
            return f.read().strip() or "0.0.0"
    except OSError:
        return "0.0.0"


__version__ = _read_version()
REPO_ROOT = _ROOT
