"""Site search built while the pages render: Pagefind's service fed page by page."""
