"""Stage `prepare`: raw dataset (Fashion-MNIST IDX, CIFAR-10 pickles or an ImageFolder) → prepared Zarr store.

    python pipeline/prepare.py --params params.yaml --out data/prepared/fashion_mnist.zarr

Reads params `data`. Writes uint8 images, labels and the seeded stratified train/val split plus the official
test split; the store appears under --out only when complete.
"""

import time
from pathlib import Path

from laya.core.cli import parser, run
from laya.core.config import from_dict, section
from laya.core.io import human_bytes
from laya.core.params import load_params
from laya.data import DataConfig, prepare


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--out", required=True, help="prepared store to write, e.g. data/prepared/fashion_mnist.zarr")
    p.add_argument("--download-dir", default=str(Path.home() / ".cache" / "laya" / "fashion-mnist"),
                   help="where a downloaded Fashion-MNIST is kept (only used when no local copy exists)")
    args = p.parse_args()
    cfg = from_dict(DataConfig, section(load_params(args.params), "data"), "data")
    started = time.perf_counter()
    summary = prepare(cfg, args.out, Path(args.download_dir))
    size = sum(f.stat().st_size for f in Path(args.out).rglob("*") if f.is_file())
    print(f"prepare: wrote {args.out} ({human_bytes(size)}) train/val/test = "
          f"{'/'.join(str(summary['sizes'][s]) for s in ('train', 'val', 'test'))} "
          f"in {time.perf_counter() - started:.1f}s")


if __name__ == "__main__":
    run(main)
