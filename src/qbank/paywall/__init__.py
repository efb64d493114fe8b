"""The paywall: premium fragments encrypted at build, license keys, keyslots and the ledger.

Modules by stage: ``keys`` (format, HKDF), ``release`` (content key, AES-GCM, key wrap), ``encrypt``
(sealing a page's HTML), ``slots`` (keyslot files), ``ledger`` (SQLite), ``leak`` (the scan of the
built site), ``csp`` (Content-Security-Policy), ``site`` (the mkdocs side), ``decrypt`` (operators).
"""
