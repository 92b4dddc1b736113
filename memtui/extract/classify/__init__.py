"""The learned turn classifier: sentence embeddings of a turn and its context, a small head.

It sits beside the local extractor's phrase rules (``memtui.extract.local``) and reads
only what they read: the person's turns. Importing this package loads nothing; the head's
weights (``head.npz``, rebuilt by ``bench/train_classifier.py`` with no network) and the
embedding model load on the first turn classified.
"""

from __future__ import annotations
