"""mkdocs hooks: thin adapters that hand mkdocs the pages and metadata qbank renders. No logic lives here."""

from __future__ import annotations

import contextlib
import gzip
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

from qbank import preview
from qbank.build import CARDS, take_preloaded
from qbank.cards.cache import CARDS_DIR, prune
from qbank.cards.pages import card_job
from qbank.cards.pool import CardDrawing, start_method, usable_cpus
from qbank.corpus import load_corpus
from qbank.deploy.headers import csp_for_site, write_host_files
from qbank.offer.model import load_shop
from qbank.pagepool.content import PageDone, PageWork, page_content
from qbank.pagepool.pool import PagePool, WorkerFailed, wanted
from qbank.paywall import site as paywall
from qbank.paywall.csp import SiteHashes
from qbank.practice.site import asset_files
from qbank.render.handwritten import handwritten_meta, with_crumbs
from qbank.render.pages import render_pages
from qbank.render.seo import PageMeta, full_title, head_html, search_label
from qbank.render.settings import settings_from
from qbank.render.sitemap import git_lastmod, robots_txt, sitemap_xml
from qbank.render.text import attr
from qbank.search.document import early_indexing, indexed_document, indexed_early
from qbank.search.stream import SearchStream

_STATE: dict[str, Any] = {}


def on_config(config: Any) -> Any:
    """Load the corpus and render every generated page once per build."""
    root = Path(config["config_file_path"]).parent
    try:
        session = preview.session_for(config, root)  # `qbank serve` only; a build with the flag refuses here
    except preview.PreviewFlagError as exc:
        raise PluginError(str(exc)) from exc
    shop, problems = load_shop(root)
    if problems:
        raise PluginError("\n".join(p.text() for p in problems))
    settings = settings_from(config.get("site_url"), config.get("extra"), shop)
    if session:  # one seal token per preview session: unchanged pages keep their HTML between saves
        settings = preview.session_settings(session, settings)
    # `qbank build` has loaded, checked (and refused a corpus with errors) already; reuse its corpus
    corpus = take_preloaded(root) or load_corpus(root)[0]
    dates = git_lastmod(root)
    pages = render_pages(corpus, settings, dates, session.pages if session else None)
    _STATE.update(settings=settings, dates=dates, pages=pages, meta={p.path: p.meta for p in pages}, preview=session,
                  hashes=SiteHashes())
    _STATE["practice_assets"] = asset_files(root, any(p.meta.kind == "practice-drill" for p in pages))
    paywall.on_config(config)
    return config


def on_files(files: Files, config: Any) -> Files:
    """Add every generated page in memory (no stub files on disk)."""
    for page in _STATE["pages"]:
        files.append(File.generated(config, page.path, content=page.markdown))
    for dest, source in _STATE["practice_assets"]:  # drills: Pyodide and the test harness, from this origin
        files.append(File.generated(config, dest, abs_src_path=str(source)))
    session = _STATE["preview"]
    # each page's content work (sanitizing, MathML, sealing, its search document) in a worker while the next
    # pages' Markdown renders here; forked first, while this process has one thread and no service to inherit
    _stop_page_work()
    _STATE.pop("page_content", None)
    if not session and wanted(len(files.documentation_pages()), usable_cpus(), start_method(),
                              len(config.plugins.events["page_content"])):
        _STATE["page_work"] = PagePool(lambda work: page_content(work, config, _STATE["settings"].seal_token))
        _STATE["page_failures"] = []
        _STATE["page_content"] = {}
    if session:
        for slug in preview.broken_questions(session):  # a page to carry the banner
            files.append(File.generated(config, f"questions/{slug}.md", content=preview.stub_markdown(slug)))
        preview.skip_unchanged(session, files, {p.path: (p.markdown, p.meta) for p in _STATE["pages"]})
    # social cards, from free metadata only, made in worker processes while the pages render (the site folder
    # is clean by now); a preview build after a save makes only the cards of the pages it renders
    _cancel_cards()
    root = Path(config["config_file_path"]).parent
    _STATE["cards"] = CardDrawing(Path(config["site_dir"]), root / CARDS_DIR)
    _add_cards()
    # the search index, fed each page as it is written (Pagefind indexes on another core meanwhile); a preview
    # build after a save keeps the index of the last full build (its snippets may lag)
    _cancel_search()
    if not (session and session.incremental):
        _STATE["search"] = SearchStream()
        # a page is indexed as soon as its content is known when the theme adds nothing else to what Pagefind
        # reads: the index is then built while the templates render; otherwise each page as written
        _STATE["early_search"] = early_indexing(config)
    return files


def _add_cards() -> None:
    drawing: CardDrawing = _STATE["cards"]
    drawing.add(card_job(m) for m in preview.cards_to_draw(_STATE["preview"], _STATE["meta"].values()))


def _cancel_cards() -> None:
    drawing: CardDrawing | None = _STATE.pop("cards", None)
    if drawing is not None:
        drawing.cancel()


def _stop_page_work() -> None:
    pool: PagePool[PageWork, PageDone, Any] | None = _STATE.pop("page_work", None)
    if pool is not None:
        pool.close()


def _cancel_search() -> None:
    search: SearchStream | None = _STATE.pop("search", None)
    if search is not None:
        search.cancel()


def on_env(env: Any, config: Any, files: Files) -> Any:
    """Every page has been read: the content work left to the worker is taken (a page it refused fails the
    build here, with every other page it refused), the hand-written pages' cards join the generated ones', and
    where every page was indexed from its content, Pagefind builds the index while the templates render."""
    pool: PagePool[PageWork, PageDone, Any] | None = _STATE.get("page_work")
    if pool is not None:
        try:
            with _worker_failures():
                _take_all(pool.rest(), config)
        finally:
            _stop_page_work()
        if _STATE["page_failures"]:
            raise PluginError("\n".join(_STATE["page_failures"]))
    _add_cards()
    search: SearchStream | None = _STATE.get("search")
    if search is not None and _STATE["early_search"]:
        search.request_index(Path(config["site_dir"]))
    return env


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    """Hand-written pages get their metadata and breadcrumbs here; generated ones already have them."""
    path = page.file.src_uri
    if path in _STATE["meta"]:
        return markdown
    meta = handwritten_meta(
        path, page.meta.get("title") or page.title or path, page.meta.get("description"),
        indexable=not page.meta.get("noindex"),
    )
    _STATE["meta"][path] = meta
    return with_crumbs(markdown, meta)


@event_priority(100)  # first: no other handler sees a page whose sealed content is not set yet
def on_page_context(context: Any, page: Any, config: Any, nav: Any) -> Any:
    """Set the content of a page sealed by the worker (mkdocs sets each page's content to what on_page_content
    returned, so it is set here, in the second pass); expose the page's title and head tags to the theme."""
    sealed: str | None = _STATE.get("page_content", {}).pop(page.file.src_uri, None)
    if sealed is not None:
        page.content = sealed
    elif "page_content" in _STATE and not page.content and not _STATE["preview"]:
        raise PluginError(f"{page.file.src_uri}: its sealed content never came back")  # never published empty
    meta: PageMeta | None = _STATE["meta"].get(page.file.src_uri)
    if page.meta.get("description"):
        # the theme writes it into `<meta name="description" content="...">` as is, quotes and all
        page.meta["description"] = attr(str(page.meta["description"]))
    if meta is not None:
        context["qb_title"] = full_title(meta.title)
        context["qb_head"] = head_html(meta, _STATE["settings"])
        context["qb_kind"] = search_label(meta.kind)
    return context


def on_post_build(config: Any) -> None:
    """Ciphertext and keyslots, qbank's sitemap (git dates, indexable pages), robots.txt, search, CDN headers."""
    site = Path(config["site_dir"])
    search: SearchStream | None = _STATE.get("search")  # stopped by on_build_error if a step below fails
    if search is not None:  # the pages not sent yet (the theme's 404); Pagefind builds the index meanwhile
        search.request_index(site)
    paywall.on_post_build(config)
    xml = sitemap_xml(_STATE["meta"].values(), _STATE["dates"], _STATE["settings"])
    (site / "sitemap.xml").write_text(xml, encoding="utf-8")
    (site / "sitemap.xml.gz").write_bytes(gzip.compress(xml.encode(), mtime=0))
    (site / "robots.txt").write_text(robots_txt(_STATE["settings"]), encoding="utf-8")
    session = _STATE["preview"]
    drawing: CardDrawing = _STATE.pop("cards")
    try:
        counts = drawing.finish()
    except Exception as exc:  # a card that fails fails the build: `qbank build` swaps nothing in
        raise PluginError(f"social cards: {type(exc).__name__}: {exc}") from exc
    if search is not None:
        failure = search.finish(site)  # the index written
        _STATE.pop("search", None)
        if failure:
            raise PluginError(failure)
    CARDS[str(site.resolve())] = counts  # `qbank build` says how many were drawn
    if not session:
        if drawing.cache is not None:
            prune(drawing.cache, drawing.keys)  # the card store keeps this site's cards only
        # `_headers` and `_redirects` for CDN hosts (and `qbank serve --built`); the policy from the hashes taken
        # as each page was written, and from any HTML file written otherwise, read back
        write_host_files(site, csp=csp_for_site(site, _STATE["hashes"]))


def on_build_error(error: Exception) -> None:
    """A failed build stops its page and card workers and its search service."""
    _stop_page_work()
    _cancel_cards()
    _cancel_search()


@event_priority(100)  # first: later plugins, and search (on_page_context), only ever see sealed HTML
def on_page_content(html: str, page: Any, config: Any, files: Files) -> str:
    """Replace premium sections by placeholders; their ciphertext is written after the build. With a page
    worker, the page is handed over and its content set when the result comes back (by ``on_env`` at the
    latest): until then it is empty, never the unsealed HTML."""
    search: SearchStream | None = _STATE.get("search")
    early = search is not None and _STATE["early_search"]
    if early and not indexed_early(page.meta):  # another template, or dates: indexed as written, the index at the end
        _STATE["early_search"] = early = False
    indexed = early and not (page.meta.get("search") or {}).get("exclude")  # excluded: main.html gives it no body
    meta: PageMeta | None = _STATE["meta"].get(page.file.src_uri)  # what on_page_context gives the theme
    work = PageWork(page.file.src_uri, page.url, html, page.title, search_label(meta.kind) if meta else None,
                    indexed)
    pool: PagePool[PageWork, PageDone, Any] | None = _STATE.get("page_work")
    if pool is not None:
        with _worker_failures():
            _take_all(pool.ready(), config)
            pool.submit(work, page)
        return ""  # what mkdocs keeps as the content until on_page_context sets the sealed one
    session = _STATE["preview"]
    # in preview the banner goes in first, then the page is indexed with it
    done = page_content(replace(work, document=False) if session else work, config, _STATE["settings"].seal_token)
    if done.error is not None or done.sealed is None:
        raise PluginError(done.error or f"{page.file.src_uri}: not sealed")
    html = paywall.take_sealed(done.sealed, page, config)
    if session:  # the banner is part of what the preview indexes
        html = preview.banner_for(session, page.file.src_uri) + html
        if indexed and search is not None:
            search.add(page.file.dest_uri, indexed_document(html, page.title, config["site_name"], work.kind))
    elif done.document is not None and search is not None:
        search.add(page.file.dest_uri, done.document)
    return html


@contextlib.contextmanager
def _worker_failures() -> Iterator[None]:
    """A page worker that raised or stopped fails the build with a message, not a traceback."""
    try:
        yield
    except WorkerFailed as exc:
        raise PluginError(f"page content: {exc}") from exc


def _take_all(results: Iterable[tuple[Any, PageDone]], config: Any) -> None:
    for page, done in results:
        _take(done, page, config)


def _take(done: PageDone, page: Any, config: Any) -> None:
    """A page's content work, back from the worker: its sealed content is kept for on_page_context, its ciphertext
    and plaintext go to the build, its search document to Pagefind (unless a later page switched the site to
    indexing pages as written); a page refused is noted for ``on_env``."""
    if done.error is not None or done.sealed is None:
        _STATE["page_failures"].append(done.error or f"{page.file.src_uri}: not sealed")
        return
    _STATE["page_content"][page.file.src_uri] = paywall.take_sealed(done.sealed, page, config)
    search: SearchStream | None = _STATE.get("search")
    if done.document is not None and search is not None and _STATE["early_search"]:
        search.add(page.file.dest_uri, done.document)


@event_priority(-100)  # last: the policy hashes the inline scripts of the final page
def on_post_page(output: str, page: Any, config: Any) -> str:
    """Add the Content-Security-Policy (not in preview: the live-reload script the server injects is inline),
    and send the page as written to the search index."""
    if not _STATE["preview"]:
        output = paywall.on_post_page(output, config, _STATE["hashes"], page.file.dest_uri)
    search: SearchStream | None = _STATE.get("search")
    if search is not None and not search.asked:
        search.add(page.file.dest_uri, output)
    elif search is not None:  # indexed from its content already (on_page_content); the index is coming back
        search.poll()
    return output


@event_priority(-100)
def on_post_template(output_content: str, template_name: str, config: Any) -> str:
    """Add the Content-Security-Policy to theme pages such as 404.html."""
    if _STATE["preview"] or not template_name.endswith(".html"):
        return output_content
    return paywall.on_post_page(output_content, config, _STATE["hashes"], template_name)

