"""Selling through a shop: our minted keys in the shop's key-list format, its order export read back.

One module per shop format (``sendowl``); ``model`` is the common row and problem model, ``csvfile``
the careful reader of an untrusted CSV.
"""
