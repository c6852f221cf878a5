"""An offline page template for `dvc plots show`: DVC's default page loads Vega from a CDN (blank without
network); this one carries vega, vega-lite and vega-embed inline, fetched once from the npm registry.

    python -m laya.vega_offline --out build/vega/plots.html     # run by `make setup`

.dvc/config points `plots.html_template` at that file. The versions are the ones dvc-render's own page loads
(its templates are written for them); each tarball is checked against the registry's SHA-512 integrity.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import tarfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from laya.core.io import atomic_path


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    script: str  # file inside the tarball
    integrity: str  # npm's dist.integrity

    @property
    def url(self) -> str:
        return f"https://registry.npmjs.org/{self.name}/-/{self.name}-{self.version}.tgz"


PACKAGES = (
    Package("vega", "5.20.2", "package/build/vega.min.js",
            "sha512-qmH7aD9GGPpssVdxL1xgcdxTbQzyRUeRR16Os385ymvQhiwCYQNA6+eXUPAZDTVLfk0RXu6Jzj6kUE5jQ80EVw=="),
    Package("vega-lite", "5.2.0", "package/build/vega-lite.min.js",
            "sha512-Yxcg8MvYfxHcG6BbkaKT0oVCIMIcE19UvqIsEwBmyd/7h2nzW7oRnID81T8UrY7hpDrIr6wa2JADOT2dhGNErw=="),
    Package("vega-embed", "6.18.2", "package/build/vega-embed.min.js",
            "sha512-wcDyQPE4J5aiCDc3/suH5RQDvrKkjuLkhzUcbOLwEkNF8/+pp17tS0JghzEvAPNRg+5aG1/N2ydixq8Lk3dOlg=="),
)

PAGE = """<!DOCTYPE html>
<html>
<head>
<meta charset="utf-8">
{refresh_tag}
<title>laya — DVC plots</title>
<!-- vega, vega-lite and vega-embed inline (laya/vega_offline.py): this page needs no network -->
%s
<style>body{font-family:system-ui,sans-serif} table{border-spacing:15px}</style>
</head>
<body>
{plot_divs}
</body>
</html>
"""


def integrity(data: bytes) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


def fetch(package: Package, cache: Path) -> bytes:
    """The package's tarball: from `cache` when it is there and intact, else from the registry."""
    path = cache / Path(package.url).name
    if path.is_file() and integrity(path.read_bytes()) == package.integrity:
        return path.read_bytes()
    with urllib.request.urlopen(package.url, timeout=60) as response:
        data = response.read()
    if integrity(data) != package.integrity:
        raise SystemExit(f"{package.url}: integrity {integrity(data)[:24]}… differs from the pinned "
                         f"{package.integrity[:24]}…; refusing it.")
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)
    return data


def script(tarball: bytes, member: str) -> str:
    with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as tar:
        source = tar.extractfile(member).read().decode("utf-8")
    return "<script>" + source.replace("</script", "<\\/script") + "</script>"


def page(scripts: list[str]) -> str:
    """DVC's page template: `{plot_divs}` (and `{refresh_tag}`) are filled by dvc-render; no `{scripts}`
    placeholder, so DVC's CDN <script> tags are left out."""
    return PAGE.replace("%s", "\n".join(scripts))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default="build/vega/plots.html", help="page template to write")
    args = p.parse_args()
    out = Path(args.out)
    scripts = [script(fetch(pkg, out.parent), pkg.script) for pkg in PACKAGES]
    with atomic_path(out) as tmp:
        tmp.write_text(page(scripts))
    print(f"vega_offline: wrote {out} ({out.stat().st_size >> 10} KB: "
          + ", ".join(f"{p.name} {p.version}" for p in PACKAGES) + ")")


if __name__ == "__main__":
    main()
