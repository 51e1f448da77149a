"""Print docs/EXPORT.md, the export's data dictionary, from the contract (``contract.py``)::

    python -m memory_lake.publish.exportdoc > docs/EXPORT.md
"""

from __future__ import annotations

import sys

from .contract import export_markdown

if __name__ == "__main__":
    sys.stdout.write(export_markdown())
