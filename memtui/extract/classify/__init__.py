"""The learned turn classifier: sentence embeddings of a turn and its context, a small head.

It sits beside the local extractor's phrase rules (``memtui.extract.local``) and reads
only what they read: the person's turns. Importing this package loads nothing; the head's
weights (``head.npz``, rebuilt by ``bench/train_classifier.py`` with no network) and the
embedding model load on the first turn classified.

The head is trained partly on user turns of the Schema-Guided Dialogue dataset (Rastogi
et al., Google Research, AAAI 2020; CC BY-SA 4.0): attribution and licence in
``bench/data/extract-corpus/README.md`` and ``bench/data/extract-corpus/sgd/LICENSE``.
"""

from __future__ import annotations
