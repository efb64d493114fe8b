"""Epochs: the reader-facing key that outlives builds, so unchanged premium sections keep their ciphertext.

``sections`` derives each section's content key from the epoch key and seals it deterministically;
``state`` decides when a new epoch starts (a reader lost, or the epoch too old); ``reseal`` turns a
build's per-build ciphertext into the epoch's; ``store`` keeps the epoch's state (its key sealed to the
release identity) in a private place between deploys. See ``docs/security.md``, "Epochs".
"""
