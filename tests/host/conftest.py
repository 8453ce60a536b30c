"""pytest setup for the host-tool tests: make scripts/pmb and tests/host/logs.py importable."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
for p in (os.path.join(ROOT, "scripts"), HERE):
    if p not in sys.path:
        sys.path.insert(0, p)
