"""Text encoders for search: the document embedder and the fast query encoders.

Importing this package loads no model and no framework; each module imports its heavy
dependencies only when first used.
"""

from __future__ import annotations

QUERY_PRECISIONS = ("int8", "fp32")
"""How a query may be embedded: int8 weights (the fast default) or exact float32."""
