"""mkdocs hook (mkdocs.yml `hooks:`): publish screenshots/ with the site, with no copy or symlink.

The pages in docs/ link to the screenshots as the repository holds them (`../screenshots/x.svg`
from docs/, `../../screenshots/x.svg` from docs/user/), so the links also work on GitHub. mkdocs
only knows files under docs_dir: this hook adds every image of screenshots/ as a site file
`screenshots/NAME`, and rewrites those links one level shorter, to where the site has them. A
link to a screenshot that does not exist stays broken, so `mkdocs build --strict` names it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

SCREENSHOTS = Path(__file__).resolve().parent
IMAGE_SUFFIXES = {".svg", ".png"}


def on_files(files: Files, config: Any) -> Files:
    for image in sorted(SCREENSHOTS.iterdir()):
        if image.suffix in IMAGE_SUFFIXES:
            files.append(File(f"screenshots/{image.name}", src_dir=str(SCREENSHOTS.parent),
                              dest_dir=config["site_dir"], use_directory_urls=config["use_directory_urls"]))
    return files


def on_page_markdown(markdown: str, page: Page, config: Any, files: Files) -> str:
    depth = page.file.src_uri.count("/")  # docs/index.md 0, docs/user/app.md 1
    from_repo = re.escape("../" * (depth + 1) + "screenshots/")
    return re.sub(rf"\]\({from_repo}", "](" + "../" * depth + "screenshots/", markdown)
