"""Math typeset at build time: arithmatex's TeX spans become MathML in the HTML, so no page loads math JavaScript
and no reader sees raw TeX. See ``render``."""
