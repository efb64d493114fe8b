"""What the build does to a page's content once mkdocs has rendered its Markdown, as one function of data:
sanitize and seal its answer parts (``qbank.paywall``), typeset the math outside them, and write the document
Pagefind will read. It changes nothing in the build, so the build may run it in a worker process
(``pool.py``) and take the result (the ciphertext, the plaintext for the leak scan, the headings to hide) in
page order.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..mathml.render import MathError, render_math
from ..paywall.encrypt import SealedPage
from ..paywall.site import PaywallBuildError, sealed_content
from ..search.document import indexed_document


@dataclass(frozen=True)
class PageWork:
    """One page's content as mkdocs rendered it, and what its search document needs."""

    src_uri: str
    url: str
    html: str
    title: str
    kind: str | None
    """The search label of the page's kind (``search_label``), or None."""
    document: bool
    """Whether to write the page's search document (indexed from its content, not as written)."""


@dataclass(frozen=True)
class PageDone:
    """The page sealed, with its search document, or the message that fails the build."""

    sealed: SealedPage | None
    document: str | None
    error: str | None


def page_content(work: PageWork, config: Any, token: str) -> PageDone:
    """Seal ``work``'s answer parts, typeset the math left outside them (hand-written pages; the parts' is done
    by the sealing) and, when asked, write its search document. A page the build refuses is a ``PageDone``
    with ``error`` set (the message names the page), not an exception."""
    try:
        sealed = sealed_content(work.html, work.src_uri, work.url, config, token)
        sealed = replace(sealed, html=render_math(sealed.html))
    except PaywallBuildError as exc:
        return PageDone(None, None, str(exc))
    except MathError as exc:
        return PageDone(None, None, f"{work.src_uri}: {exc}")
    document = indexed_document(sealed.html, work.title, config["site_name"], work.kind) if work.document else None
    return PageDone(sealed, document, None)
