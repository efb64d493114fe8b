"""The offer a reader can buy: price, checkout link, access period and refund terms, from ``site_src/shop.yaml``."""
