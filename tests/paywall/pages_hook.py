"""Test-only mkdocs hook: question pages and a hub page, with premium sections wrapped per the contract.

The site renderer (another branch) owns real page generation; this stand-in emits exactly the markup
the paywall expects from it: ``<div class="qb-premium" data-qb-section="I" data-qb-heading="H"
markdown="1">`` around each premium section. With ``QBANK_TEST_LEAK=1`` it also copies premium text
into a page's meta description, which the leak scan must catch.
"""

from __future__ import annotations

import html
import os
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

from qbank.answers import PremiumSection
from qbank.corpus import load_corpus


def on_files(files: Files, config: Any) -> Files:
    """Add a page per question and a hub listing them with the 'unlocked for you' count."""
    corpus, _ = load_corpus(Path(config["config_file_path"]).parent)
    slugs = sorted(corpus.questions)
    premium = [s for s in slugs if corpus.questions[s].access == "premium"]
    for n, slug in enumerate(slugs):
        q, answer = corpus.questions[slug], corpus.answers[slug]
        out = [f"# {q.title}", "", q.teaser, ""]
        leak = ""
        for part in answer.parts:
            if isinstance(part, PremiumSection):
                i = answer.premium.index(part)
                leak = leak or " ".join(part.markdown.split("\n", 2)[2].split()[:20])
                out += [
                    f'<div class="qb-premium" data-qb-section="{i}" data-qb-heading="{html.escape(part.heading)}" '
                    'markdown="1">',
                    "",
                    part.markdown,
                    "</div>",
                    "",
                ]
            else:
                out += [part.markdown, ""]
        nxt = slugs[(n + 1) % len(slugs)]
        out += [f"Next: [{corpus.questions[nxt].title}]({nxt}.md)", "", "[All questions](../hub.md)", ""]
        front = ""
        if leak and os.environ.get("QBANK_TEST_LEAK") == "1":
            front = f"---\ndescription: {leak}\n---\n"
        files.append(File.generated(config, f"questions/{slug}.md", content=front + "\n".join(out)))
    hub = [
        "# All questions",
        "",
        f'<span class="qb-unlock-count"><span data-qb-unlock-count="{len(premium)}">0</span> of {len(premium)} '
        "premium answers unlocked for you</span>",
        "",
    ]
    hub += [f"- [{corpus.questions[s].title}](questions/{s}.md) · {corpus.questions[s].access}" for s in slugs]
    files.append(File.generated(config, "hub.md", content="\n".join(hub) + "\n"))
    return files
