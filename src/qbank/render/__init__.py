"""Pure render functions: content in, page Markdown and metadata out."""
