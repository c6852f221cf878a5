"""Feature caches to and from other tools' layouts (not a DVC stage: run it by hand).

    python pipeline/convert.py export data/features/vit.zarr vit.h5              # HDF5 (by the .h5/.hdf5 suffix)
    python pipeline/convert.py export data/features/vit.zarr vit_memmap/         # raw .bin files + metadata.json
    python pipeline/convert.py import vit.h5 data/features/vit_copy.zarr
    python pipeline/convert.py import theirs.h5 mine.zarr --layers blocks.0 blocks.1 --classes cat dog

`import` of a file laya exported rebuilds the store byte for byte (same card, codec and shards); a file another
tool wrote needs its arrays at `<split>/layers/<layer>` and `<split>/labels`, the layer order and class names.
Layouts: laya.interop. Nothing appears under the output name until it is complete.
"""

from pathlib import Path

from laya.core.cli import parser, run
from laya.core.config import ConfigError
from laya.interop import export_hdf5, export_memmap, import_hdf5, import_memmap
from laya.storage.store import FeatureStore

HDF5_SUFFIXES = (".h5", ".hdf5")


def layout_of(path: Path, given: str | None) -> str:
    """hdf5 | memmap: as given, else by the path (an .h5/.hdf5 file, or a folder)."""
    if given:
        return given
    return "hdf5" if path.suffix in HDF5_SUFFIXES else "memmap"


def main() -> None:
    p = parser(__doc__)
    p.add_argument("direction", choices=["export", "import"])
    p.add_argument("source", help="export: a feature store; import: an HDF5 file or a memmap folder")
    p.add_argument("target", help="export: the HDF5 file or memmap folder to write; import: the store to write")
    p.add_argument("--format", choices=["hdf5", "memmap"], default=None,
                   help="the other side's layout (default: hdf5 for .h5/.hdf5 paths, else memmap)")
    p.add_argument("--layers", nargs="+", default=None, help="import without a laya card: layer names, depth order")
    p.add_argument("--classes", nargs="+", default=None, help="import without a laya card: class names")
    p.add_argument("--backbone", default=None, help="import without a laya card: a name for the backbone")
    p.add_argument("--codec", choices=["lz4", "zstd", "none"], default=None,
                   help="import: the store's codec (default: the card's, else lz4)")
    args = p.parse_args()
    source, target = Path(args.source), Path(args.target)
    if args.direction == "export":
        if target.exists():
            raise ConfigError(f"{target}: already exists; export to a new path (nothing was written).")
        store = FeatureStore.open(source)
        layout = layout_of(target, args.format)
        (export_hdf5 if layout == "hdf5" else export_memmap)(store, target)
    else:
        if target.exists():
            raise ConfigError(f"{target}: already exists; import into a new store path (nothing was written).")
        layout = layout_of(source, args.format)
        store = (import_hdf5 if layout == "hdf5" else import_memmap)(
            source, target, layers=args.layers, classes=args.classes, backbone=args.backbone, codec=args.codec)
        print(f"{store.path}: {len(store.layers)} layers {store.dims}, sizes {store.info.sizes}")
    print(f"convert: {args.direction}ed {source} → {target} ({layout})")


if __name__ == "__main__":
    run(main)
